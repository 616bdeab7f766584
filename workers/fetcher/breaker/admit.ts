import { randomUUID } from "node:crypto";
import type { BreakerConfig, BreakerState } from "@/lib/breaker";
import type { Database } from "@/lib/db";

export interface Admission {
  admitted: boolean;
  /** This fetch is the breaker's single half-open probe; its token fences the probe's result. */
  probe: boolean;
  probeToken?: string;
  state: BreakerState;
  disabled: boolean;
}

interface Row {
  state: BreakerState;
  claimed: boolean;
  disabled: boolean;
}

/**
 * May this fetch go out? closed → yes. open within the cool-down → no (zero requests while
 * open). open past the cool-down, or half-open with an expired probe lease → only the caller
 * that claims the probe.
 *
 * Why exactly one of any number of concurrent callers, across processes, gets the probe: the
 * claim is one UPDATE … WHERE breaker_state … RETURNING. Racing UPDATEs on the row queue on its
 * row lock; under READ COMMITTED each waiter re-checks the WHERE against the row the winner
 * committed (now half_open with a live lease) and updates nothing. The outer SELECT reads the
 * statement's snapshot, taken before the claim, so a loser still sees "open" and is refused.
 * The claim leaves breaker_changed_at (when it opened) alone: the probe's own times are its
 * lease, and a probe handed back without a verdict (releaseProbe) finds the cool-down over.
 * All times are the database's now(), so workers with skewed clocks agree. The row must exist
 * (loadSourceState creates it).
 */
export async function admit(
  db: Database,
  sourceId: string,
  config: BreakerConfig,
): Promise<Admission> {
  const token = randomUUID();
  const rows = await db.prisma.$queryRaw<Row[]>`
    WITH claim AS (
      UPDATE source_state
      SET breaker_state = 'half_open',
          breaker_probe_owner = ${token},
          breaker_probe_until = now() + ${config.probeLeaseMs}::double precision * interval '1 millisecond',
          updated_at = now()
      WHERE source_id = ${sourceId}
        AND disabled_at IS NULL
        AND ((breaker_state = 'open'
              AND breaker_changed_at + ${config.coolDownMs}::double precision * interval '1 millisecond' <= now())
          OR (breaker_state = 'half_open' AND breaker_probe_until <= now()))
      RETURNING source_id
    )
    SELECT s.breaker_state AS state,
           EXISTS (SELECT 1 FROM claim) AS claimed,
           s.disabled_at IS NOT NULL AS disabled
    FROM source_state s
    WHERE s.source_id = ${sourceId}`;
  const row = rows[0];
  if (!row) throw new Error(`fetcher: no source_state row for source ${sourceId}`);
  if (row.claimed)
    return { admitted: true, probe: true, probeToken: token, state: "half_open", disabled: false };
  const admitted = !row.disabled && row.state === "closed";
  return { admitted, probe: false, state: row.state, disabled: row.disabled };
}
