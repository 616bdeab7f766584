import type { BreakerState } from "@/lib/breaker";
import type { Database } from "@/lib/db";
import { emit } from "@/lib/events";

/**
 * A fetch got a good answer (200 or 304): the source works, so the breaker closes and the
 * failure count starts again at 0. Any success closes it, the probe's or a straggler's admitted
 * before the breaker opened: either is fresh evidence that the source answers. One UPDATE of one
 * row, so it serialises with racing failures on the row lock; breaker_changed_at moves only on a
 * real change of state, so it reads back as "changed at now()" (this statement's time) exactly when
 * this UPDATE closed the breaker, and breaker:closed is emitted then, once.
 */
export async function recordSuccess(db: Database, sourceId: string): Promise<BreakerState | null> {
  const rows = await db.prisma.$queryRaw<{ state: BreakerState; closed: boolean }[]>`
    UPDATE source_state
    SET breaker_changed_at = CASE WHEN breaker_state <> 'closed' THEN now() ELSE breaker_changed_at END,
        breaker_state = 'closed',
        breaker_failures = 0,
        breaker_probe_owner = NULL,
        breaker_probe_until = NULL,
        updated_at = now()
    WHERE source_id = ${sourceId}
    RETURNING breaker_state AS state, breaker_changed_at = now() AS closed`;
  const row = rows[0];
  if (row?.closed) emit("breaker:closed", { source: sourceId });
  return row?.state ?? null;
}
