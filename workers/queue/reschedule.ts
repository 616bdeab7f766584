import type { Database } from "@/lib/db";
import type { Lease } from "./types";

export interface NextRun {
  /** Seconds from now (database clock) until it is due again. */
  delaySeconds: number;
  priority?: number;
  /** Replaces the payload (state a recurring job carries to its next run). */
  payload?: Record<string, unknown>;
}

/**
 * Finishes one run of a recurring job (the frontier: a source's next poll) and makes it due again
 * later, attempts from 0. Fenced like complete(); false when the lease was no longer the caller's.
 */
export async function reschedule(db: Database, lease: Lease, next: NextRun): Promise<boolean> {
  const payload = next.payload === undefined ? null : JSON.stringify(next.payload);
  const changed = await db.prisma.$executeRaw`
    UPDATE jobs
    SET state = 'ready', attempts = 0,
        run_at = now() + make_interval(secs => ${Math.max(0, next.delaySeconds)}::float8),
        enqueued_at = now() + make_interval(secs => ${Math.max(0, next.delaySeconds)}::float8),
        priority = coalesce(${next.priority ?? null}::int, priority),
        payload = coalesce(${payload}::jsonb, payload),
        lease_token = NULL, lease_owner = NULL, leased_at = NULL, lease_expires_at = NULL,
        first_failed_at = NULL, last_failed_at = NULL, last_error = NULL, fingerprint = NULL
    WHERE id = ${lease.id}::bigint AND attempts = ${lease.attempt} AND lease_token = ${lease.token}::uuid
      AND state = 'leased'`;
  return changed === 1;
}
