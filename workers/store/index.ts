import type { Database } from "@/lib/db";
import { normalize, RejectedObservation, type WriteKind } from "./observation";
import { recordRejection } from "./recordRejection";
import { type WriteOutcome, writeObservation } from "./writeObservation";
import { writeRetraction } from "./writeRetraction";

export type { ObservationInput, Origin, WriteResult } from "./observation";
export { NEWS_CHANNEL, type WriteOutcome } from "./writeObservation";

/**
 * The storage contract's three writes. Each validates its input, then decides and writes in
 * one statement (see writeObservation.ts and writeRetraction.ts), and always leaves exactly one
 * news_events row: bad input is recorded as `rejected` with its reason and the caller gets the
 * outcome back rather than an exception, so one bad item never stops a batch.
 * Database errors (a lost connection) do throw: that delivery is not recorded and must be retried.
 */
export function observe(db: Database, input: unknown): Promise<WriteOutcome> {
  return write(db, input, "observe");
}

/** An edit: changes displayed fields and bumps the version; creates the item if unseen. */
export function edit(db: Database, input: unknown): Promise<WriteOutcome> {
  return write(db, input, "edit");
}

/** A retraction: sets the tombstone; the row stays and nothing brings it back. */
export function retract(db: Database, input: unknown): Promise<WriteOutcome> {
  return write(db, input, "retract");
}

async function write(db: Database, input: unknown, kind: WriteKind): Promise<WriteOutcome> {
  let obs: ReturnType<typeof normalize>;
  try {
    obs = normalize(input, kind);
  } catch (err) {
    if (err instanceof RejectedObservation) return recordRejection(db, input, kind, err.reason);
    throw err;
  }
  try {
    return kind === "retract" ? await writeRetraction(db, obs) : await writeObservation(db, obs);
  } catch (err) {
    if (isUnknownSource(err)) {
      return recordRejection(
        db,
        input,
        kind,
        `unknown_source: no source with id "${String(obs.row.source_id)}" is configured`,
        obs.entryKey,
      );
    }
    throw err;
  }
}

// The news → sources foreign key is how an unknown source is detected: no extra read per write.
function isUnknownSource(err: unknown): boolean {
  const text = `${(err as Error)?.message ?? ""} ${JSON.stringify((err as { meta?: unknown })?.meta ?? {})}`;
  return /news_source_id_fkey|ForeignKeyConstraintViolation|23503/.test(text);
}
