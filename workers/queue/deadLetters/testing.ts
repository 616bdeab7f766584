import type { Database } from "@/lib/db";
import { claim } from "../claim";
import { enqueue } from "../enqueue";
import { fail } from "../fail";
import { toJobError } from "../jobError";

export interface DeadSpec {
  key?: string | null;
  sourceId?: string | null;
  payload?: Record<string, unknown>;
  error?: unknown;
  host?: string;
}

/**
 * Makes dead letters the way the queue does (enqueue, claim, fail on the last attempt), one per
 * spec, in order; returns their ids. For tests of the dead-letter operations.
 */
export async function makeDeadLetters(
  db: Database,
  queue: string,
  specs: DeadSpec[],
): Promise<string[]> {
  const ids: string[] = [];
  for (const spec of specs) {
    const [id] = await enqueue(db, queue, [
      {
        key: spec.key ?? null,
        sourceId: spec.sourceId ?? null,
        payload: spec.payload,
        maxAttempts: 1,
      },
    ]);
    if (!id) throw new Error(`makeDeadLetters: key ${spec.key} is live in ${queue}`);
    const [job] = await claim(db, queue, "test-worker", 1, 30);
    if (!job || job.lease.id !== id) throw new Error("makeDeadLetters: another job was due");
    const error = spec.error ?? Object.assign(new Error(`failed ${id}`), { code: "E_TEST" });
    const outcome = await fail(db, "test-worker", job, toJobError(error, spec.host));
    if (outcome !== "dead") throw new Error(`makeDeadLetters: ${outcome}`);
    ids.push(id);
  }
  return ids;
}
