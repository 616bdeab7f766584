import { readJsonBody } from "@/lib/api/body";
import { json } from "@/lib/api/respond";
import { requireAdmin } from "@/lib/auth/guard";
import { getDb } from "@/lib/db";
import { discardDeadLetters } from "@/workers/queue/deadLetters";
import { badSelection, bodyFilter, SelectionBody } from "../filter";

export const dynamic = "force-dynamic";

/**
 * POST /api/dead-letters/discard { filter, all?, dryRun?, cap? } → { dryRun, matched, discarded,
 * ids, cap, capped, moreMatched, changedMeanwhile, auditId }. Archives (never deletes); audited.
 */
export async function POST(request: Request): Promise<Response> {
  const auth = await requireAdmin(request);
  if (auth instanceof Response) return auth;
  const body = await readJsonBody(request, SelectionBody);
  if (!body.ok) return body.response;
  const { filter, all, dryRun, cap } = body.value;
  try {
    return json(
      await discardDeadLetters(await getDb(), {
        actor: auth.actor,
        filter: bodyFilter(filter),
        all,
        dryRun,
        cap,
      }),
    );
  } catch (err) {
    return badSelection(err);
  }
}
