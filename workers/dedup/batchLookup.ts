import type { DedupThresholds } from "@/lib/dedup";
import { Prisma } from "@/lib/generated/prisma/client";
import { anchorQuery } from "./anchors";
import type { Tx } from "./clusters";
import { type Candidate, nearQuery, type Probe } from "./lookup";

export interface NearProbe {
  probe: Probe;
  /** The probe's anchors, as many as retrieval.anchors keeps. */
  anchors: readonly number[];
}

/**
 * Stage 3's two lookups (SimHash bands, anchors) for a batch of probes in one round trip: per
 * probe the same statements nearCandidates and anchorCandidates run, as UNION ALL branches, so
 * each is planned with its own values. Per probe: the band candidates nearest first, then the
 * anchor candidates most shared first, each entry key once.
 */
export async function nearAll(
  tx: Tx,
  probes: readonly NearProbe[],
  t: DedupThresholds,
): Promise<Map<string, Candidate[]>> {
  const r = t.retrieval;
  const branches: Prisma.Sql[] = [];
  probes.forEach(({ probe, anchors }, i) => {
    if (probe.keys.simhash !== null) {
      branches.push(Prisma.sql`
        SELECT ${i}::int AS ord, 0 AS kind, row_number() OVER () AS rank, q.entry_key, q.distance
        FROM (${nearQuery(probe, t)}) q`);
    }
    const mine = [...new Set(anchors)].slice(0, r.anchors);
    if (r.anchors > 0 && mine.length >= r.minShared) {
      branches.push(Prisma.sql`
        SELECT ${i}::int AS ord, 1 AS kind, row_number() OVER () AS rank, q.entry_key, q.distance
        FROM (${anchorQuery(probe, mine, t)}) q`);
    }
  });
  const found = new Map<string, Candidate[]>();
  if (branches.length === 0) return found;
  const rows = await tx.$queryRaw<{ ord: number; entry_key: string; distance: number | null }[]>`
    SELECT ord, entry_key, distance FROM (${Prisma.join(branches, " UNION ALL ")}) u
    ORDER BY ord, kind, rank`;
  for (const row of rows) {
    const key = (probes[row.ord] as NearProbe).probe.entryKey;
    const list = found.get(key) ?? [];
    if (!list.some((c) => c.entryKey === row.entry_key)) {
      list.push({
        entryKey: row.entry_key,
        ...(row.distance === null ? {} : { distance: row.distance }),
      });
    }
    found.set(key, list);
  }
  return found;
}
