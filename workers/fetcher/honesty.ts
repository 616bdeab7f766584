import type { Database } from "@/lib/db";
import { sha256 } from "./attempt";
import { distrustValidators, type SourceFetchState } from "./sourceState";

/**
 * The honesty check, run on the periodic unconditional 200: if the body differs from the one the
 * stored validators describe, ask once more with those old validators. A source that answers 304
 * to them claims "unchanged" about a body we just saw change: its 304s cannot be trusted, and it
 * is fetched in full from then on. Precise, unlike comparing hashes alone (the body may have
 * changed honestly since the last 304), at the cost of one extra request, only when the check is
 * due and the body changed. Returns true when the source was caught.
 */
export async function checkHonesty(
  db: Database,
  sourceId: string,
  state: SourceFetchState,
  body: Buffer,
  askWithOldValidators: () => Promise<number>,
): Promise<boolean> {
  if (!state.trustsValidators || !state.bodySha256 || sha256(body) === state.bodySha256)
    return false;
  if (state.etag === null && state.lastModified === null) return false;
  if ((await askWithOldValidators()) !== 304) return false;
  await distrustValidators(db, sourceId);
  return true;
}
