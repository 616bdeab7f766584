import type { Database } from "@/lib/db";

/**
 * The probe ended without a verdict on the source's health (robots.txt refused it, a 404 disabled
 * the source, our own network is out): hand the slot back. The breaker returns to open with its
 * old timer, whose cool-down is already over, so the next admit may probe at once. Fenced by the
 * probe's token so a probe overtaken after its lease expired releases nothing.
 */
export async function releaseProbe(
  db: Database,
  sourceId: string,
  probeToken: string,
): Promise<boolean> {
  const rows = await db.prisma.$queryRaw<{ source_id: string }[]>`
    UPDATE source_state
    SET breaker_state = 'open', breaker_probe_owner = NULL, breaker_probe_until = NULL, updated_at = now()
    WHERE source_id = ${sourceId} AND breaker_state = 'half_open' AND breaker_probe_owner = ${probeToken}
    RETURNING source_id`;
  return rows.length > 0;
}
