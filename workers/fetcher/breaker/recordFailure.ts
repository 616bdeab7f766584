import type { BreakerConfig, BreakerState } from "@/lib/breaker";
import type { FetchCode } from "@/lib/codes";
import type { Database } from "@/lib/db";
import { emit } from "@/lib/events";
import { Prisma } from "@/lib/generated/prisma/client";

export interface FailureResult {
  state: BreakerState;
  failures: number;
  /** This failure opened the breaker (threshold reached, or the probe failed). */
  opened: boolean;
}

export interface Failure {
  /** The request's final code, carried by breaker:opened. */
  code: FetchCode;
  /** The half-open probe's token when this request was the probe. */
  probeToken?: string;
  /** Failed requests of the poll, its retries included (decision 012): 1 by default. */
  failedRequests?: number;
}

/**
 * A poll failed, after `failedRequests` failed requests (its retries included: decision 012).
 * Consecutive failed requests are counted; at the threshold a closed breaker opens. A
 * failed probe reopens it with the cool-down timer reset (breaker_changed_at = now()). The probe
 * is recognised by its token, not by the state alone: a probe whose lease expired and was
 * overtaken by a newer probe must not decide for the newer one (the same fencing the queue's
 * leases use). Failures that arrive while open only add to the count.
 *
 * Every SET expression reads the row as it was before this UPDATE; under READ COMMITTED a
 * racing writer's committed version is re-read first (the row lock orders them), so two failures
 * reported at once count twice and open the breaker once. `opened` is read back as "open since
 * now()": now() is this statement's transaction time, so only this UPDATE can have set it, and
 * breaker:opened is emitted here, once per opening. It is a reopening when the request held a
 * probe token: a holder can only open the breaker through its probe while the threshold is above
 * 1, since a probe is one request (a closed breaker it finds was reset to 0 by a success).
 */
export async function recordFailure(
  db: Database,
  sourceId: string,
  config: BreakerConfig,
  failure: Failure,
): Promise<FailureResult | null> {
  const token = failure.probeToken ?? null;
  const added = Math.max(1, Math.trunc(failure.failedRequests ?? 1));
  // A fragment reused in four SET expressions: a failed probe (this token holds it), or the
  // threshold reached from closed.
  const opens = Prisma.sql`(coalesce(breaker_state = 'half_open' AND breaker_probe_owner = ${token}::text, false)
    OR (breaker_state = 'closed' AND breaker_failures + ${added}::int >= ${config.threshold}::int))`;
  const rows = await db.prisma.$queryRaw<FailureResult[]>`
    UPDATE source_state
    SET breaker_failures = breaker_failures + ${added}::int,
        breaker_state = CASE WHEN ${opens} THEN 'open' ELSE breaker_state END,
        breaker_changed_at = CASE WHEN ${opens} THEN now() ELSE breaker_changed_at END,
        breaker_probe_owner = CASE WHEN ${opens} THEN NULL ELSE breaker_probe_owner END,
        breaker_probe_until = CASE WHEN ${opens} THEN NULL ELSE breaker_probe_until END,
        updated_at = now()
    WHERE source_id = ${sourceId}
    RETURNING breaker_state AS state, breaker_failures AS failures,
              (breaker_state = 'open' AND breaker_changed_at = now()) AS opened`;
  const result = rows[0] ?? null;
  if (result?.opened) {
    emit("breaker:opened", {
      source: sourceId,
      code: failure.code,
      failures: result.failures,
      openForSeconds: config.coolDownMs / 1000,
      reopened: token !== null,
    });
  }
  return result;
}
