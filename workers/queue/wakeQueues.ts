import type { Database } from "@/lib/db";
import { Prisma } from "@/lib/generated/prisma/client";
import { logger } from "@/lib/logger";
import { textArray } from "./arrayLiteral";
import { queueQuery } from "./sql";

/** The channel enqueues notify, so idle workers wake at once instead of at their next poll. */
export const JOBS_CHANNEL = "wirewatch_jobs";

interface Waker {
  /** Queues to wake in the next statement. */
  pending: Set<string>;
  /** The statement in flight, if any: wakes asked for meanwhile go out after it. */
  sending: Promise<void> | null;
}

const wakers = new WeakMap<Database, Waker>();

/**
 * Wakes the workers of a queue after jobs were added to it and committed: NOTIFY
 * wirewatch_jobs with the queue's name, in a statement of its own, one in flight per database
 * handle. Wakes asked for while one is in flight are gathered into the next, so a process
 * sends as many notifying commits as PostgreSQL can take one after another, not one per
 * enqueue (docs/decisions/037).
 *
 * Why not in the enqueue's own statement: PostgreSQL serialises the commits of notifying
 * transactions on one lock, held through the commit's WAL flush. The line hands each item on
 * to its next stage with an enqueue, so at hundreds of items a second every one of those
 * commits queued behind the others (bench scale, docs/capacity.md).
 *
 * Best effort, as NOTIFY always was here: a wake that fails or is lost leaves the jobs to the
 * workers' poll. Resolves when the wake it joined has been sent (or has failed).
 */
export function wakeQueue(db: Database, queue: string): Promise<void> {
  let waker = wakers.get(db);
  if (!waker) {
    waker = { pending: new Set(), sending: null };
    wakers.set(db, waker);
  }
  waker.pending.add(queue);
  if (!waker.sending) waker.sending = send(db, waker);
  return waker.sending;
}

async function send(db: Database, waker: Waker): Promise<void> {
  try {
    while (waker.pending.size > 0) {
      const queues = [...waker.pending];
      waker.pending.clear();
      try {
        await queueQuery(
          db,
          Prisma.sql`SELECT count(pg_notify(${JOBS_CHANNEL}, q))::int AS woke
                     FROM unnest(${textArray(queues)}::text[]) AS q`,
        );
      } catch (err) {
        logger().debug({ err, queues }, "could not wake queues; their workers poll");
      }
    }
  } finally {
    waker.sending = null;
  }
}
