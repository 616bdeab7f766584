import type { ItemKeys } from "@/lib/dedup";
import type { Tx } from "./clusters";

/**
 * The names two decisions that could find each other both lock: the item itself, its URL key,
 * its content key, its anchors (every pair of them when the lookup needs minShared ≥ 2: two items
 * it pairs share two anchors, so a pair name, while a common anchor alone, a city named in every
 * story of the day, no longer makes unrelated decisions wait), and per SimHash band the parts of
 * the band's 16 bits. The banded
 * lookup finds a pair when some band differs by at most `radius` bits; split a band into
 * radius + 1 parts and, by pigeonhole, two such values agree on at least one whole part; the
 * anchor lookup finds a pair sharing at least one anchor. So two items the lookups could pair
 * always share a lock name, and the second to lock waits for the first to commit and then sees
 * it. Per item that is 3 + 15 anchor pairs + 4 · (radius + 1) locks (26 at radius 1 and 6
 * anchors) instead of one per probe (4 · 17 = 68). The price: coarser band names (a band part of
 * 8 bits is shared by 1 item in 256), so unrelated decisions sometimes wait for each other for the
 * length of one transaction. A settings change of minShared between two racing decisions can
 * leave them on different names; the re-run (workers/admin/dedupRerun.ts) is how new thresholds
 * are applied to what was decided before.
 */
export function lockNames(
  entryKey: string,
  keys: ItemKeys,
  radius: number,
  anchors: readonly number[] = [],
  minShared = 1,
): string[] {
  const names = [`e:${entryKey}`];
  const distinct = [...new Set(anchors)].sort((x, y) => x - y);
  if (minShared >= 2) {
    for (let i = 0; i < distinct.length; i++) {
      for (let j = i + 1; j < distinct.length; j++) names.push(`a:${distinct[i]},${distinct[j]}`);
    }
  } else {
    for (const a of distinct) names.push(`a:${a}`);
  }
  if (keys.urlKey !== null) names.push(`u:${keys.urlKey}`);
  if (keys.contentKey !== null) names.push(`c:${keys.contentKey}`);
  if (keys.bands !== null) {
    const parts = Math.min(16, radius + 1);
    keys.bands.forEach((band, i) => {
      let from = 0;
      for (let p = 0; p < parts; p++) {
        // Parts as even as 16 bits allow (radius 1: 8 + 8; radius 2: 6 + 5 + 5).
        const width = Math.floor(16 / parts) + (p < 16 % parts ? 1 : 0);
        const value = (band >>> from) & ((1 << width) - 1);
        names.push(`b${i}.${p}:${value}`);
        from += width;
      }
    });
  }
  return names;
}

/**
 * Takes the transaction-level advisory locks for `names` in one statement, in ascending order of
 * their 64-bit hashes. Every decision takes all its locks in that one ascending pass and none
 * later, so two decisions never wait on each other in a cycle (whatever row locks they take
 * afterwards, a holder of row locks is never waiting for an advisory one). Released at commit.
 */
export async function lockAll(tx: Tx, names: string[]): Promise<void> {
  await tx.$queryRaw`
    SELECT count(pg_advisory_xact_lock(h))::int AS n
    FROM (SELECT DISTINCT hashtextextended(k, 0) AS h FROM unnest(${names}::text[]) AS k
          ORDER BY h) AS ordered`;
}
