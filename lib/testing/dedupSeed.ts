import type { Database } from "../db";

/** A 64-hex entry key from a small number, so tests can name items. */
export const dedupKey = (n: number) => n.toString(16).padStart(64, "0");

/**
 * What seedDedupRows writes, and what it adds up to. Three outlets; one wire story in all three
 * (cluster 1: canonical from "wire", "daily" linked by the exact stage, "tribune" by the near
 * stage with evidence, and an earlier "tribune" link undone by an operator), one story on two
 * (cluster 2, linked by URL), a dissolved cluster, unique items, two pending review pairs and a
 * rejected one, a retracted item removed from clusters, and a finished dry run with its diff.
 */
export const DEDUP_SEED = {
  sources: ["wire", "daily", "tribune"],
  keys: {
    canonical: dedupKey(1),
    exact: dedupKey(2),
    near: dedupKey(3),
    undone: dedupKey(4),
    urlCanonical: dedupKey(5),
    url: dedupKey(6),
    unique1: dedupKey(7),
    unique2: dedupKey(8),
    reviewA: dedupKey(9),
    reviewB: dedupKey(10),
    reviewC: dedupKey(11),
    reviewD: dedupKey(12),
    removed: dedupKey(13),
    old: dedupKey(14),
  },
  titles: {
    canonical: "Central bank raises rates by a quarter point",
    exact: "Central bank raises rates by a quarter point",
    near: "Central bank raises interest rates by a quarter point",
    reviewA: "Port workers strike over pay for a third day",
    reviewB: "Port workers end strike after pay deal",
  },
  /** Decided in the last 24 hours, by kind (the retracted item and the old one not counted). */
  day: { url: 1, exact: 1, near: 1, meaning: 0, review: 2, unique: 7 },
  /**
   * Per source (all time; items first seen in the last 24 h): the retracted item is no
   * decision, tribune's 30-hours-old item counts in all time only.
   */
  perSource: {
    daily: { decided: 5, duplicates: 2, decidedDay: 5, duplicatesDay: 2 },
    tribune: { decided: 4, duplicates: 1, decidedDay: 3, duplicatesDay: 1 },
    wire: { decided: 4, duplicates: 0, decidedDay: 4, duplicatesDay: 0 },
  },
  /** Live clusters, pending reviews. */
  liveClusters: 2,
  pendingReviews: 2,
  /** The near link's evidence. */
  evidence: {
    hamming: 4,
    shared: ["central", "bank", "raises", "rates", "by", "a", "quarter", "point"],
    sharedPhrases: ["central bank", "quarter point"],
    onlyA: ["interest"],
    onlyB: [],
  },
  run: { appear: 1, go: 1 },
  /** lib/dedup's DedupThresholds in force (revision 2), and the ones the dry run tried. */
  thresholds: {
    windowHours: 72,
    retrieval: { radius: 1, maxHamming: 32 },
    near: { duplicate: 0.5, review: 0.4 },
  },
  runThresholds: {
    windowHours: 72,
    retrieval: { radius: 1, maxHamming: 32 },
    near: { duplicate: 0.45, review: 0.4 },
  },
} as const;

const ago = (now: Date, minutes: number) => new Date(now.getTime() - minutes * 60_000);

/** Rows of the dedup tables (and the news rows they point at), as the stage would leave them. */
export async function seedDedupRows(
  db: Database,
  now = new Date(),
): Promise<{ clusters: string[] }> {
  const p = db.prisma;
  const k = DEDUP_SEED.keys;
  const t = DEDUP_SEED.titles;
  await p.source.createMany({
    data: DEDUP_SEED.sources.map((id) => ({
      id,
      name: `The ${id[0]?.toUpperCase()}${id.slice(1)}`,
      kind: "stream",
    })),
    skipDuplicates: true,
  });

  const news: [string, string, string | null, number, string | null][] = [
    // key, source, title, minutes ago first seen, link
    [k.canonical, "wire", t.canonical, 50, "https://wire.example/rates"],
    [k.exact, "daily", t.exact, 45, "https://daily.example/rates"],
    [k.near, "tribune", t.near, 40, "https://tribune.example/rates"],
    [k.undone, "tribune", "Rates: central bank moves again", 38, null],
    [
      k.urlCanonical,
      "wire",
      "Floods close the northern highway",
      120,
      "https://wire.example/floods",
    ],
    [k.url, "daily", "Floods close the northern highway", 110, "https://amp.wire.example/floods"],
    [k.unique1, "wire", "Parliament passes the budget", 30, null],
    [k.unique2, "daily", "Football: late goal settles the derby", 20, null],
    [k.reviewA, "wire", t.reviewA, 15, null],
    [k.reviewB, "daily", t.reviewB, 10, null],
    [k.reviewC, "tribune", "Ministers meet on fuel prices", 9, null],
    [k.reviewD, "daily", "Ministers to meet over fuel prices", 8, null],
    [k.removed, "daily", "Retracted story", 60, null],
    [k.old, "tribune", "Yesterday's weather", 30 * 60, null],
  ];
  for (const [key, source, title, minutes, link] of news) {
    await p.$executeRaw`
      INSERT INTO news (entry_key, source_id, canonical_id, quality, title, link, version,
                        first_seen_at, first_source, first_collector, last_result, deleted_at,
                        updated_at)
      VALUES (${key}, ${source}, ${`guid-${key.slice(-4)}`}, 'authoritative', ${title}, ${link}, 1,
              ${ago(now, minutes)}, ${source}, 'A', 'inserted',
              ${key === k.removed ? ago(now, 5) : null}, ${ago(now, minutes)})`;
  }

  const [c1] = await p.$queryRaw<{ id: string }[]>`
    INSERT INTO dedup_clusters (canonical_key, members, outlets, first_seen_at, created_at, updated_at)
    VALUES (${k.canonical}, 3, 3, ${ago(now, 50)}, ${ago(now, 45)}, ${ago(now, 40)})
    RETURNING id::text AS id`;
  const [c2] = await p.$queryRaw<{ id: string }[]>`
    INSERT INTO dedup_clusters (canonical_key, members, outlets, first_seen_at, created_at, updated_at)
    VALUES (${k.urlCanonical}, 2, 2, ${ago(now, 120)}, ${ago(now, 110)}, ${ago(now, 110)})
    RETURNING id::text AS id`;
  const [c3] = await p.$queryRaw<{ id: string }[]>`
    INSERT INTO dedup_clusters (canonical_key, members, outlets, first_seen_at, created_at, updated_at,
                                dissolved_at)
    VALUES (${k.removed}, 1, 1, ${ago(now, 60)}, ${ago(now, 58)}, ${ago(now, 5)}, ${ago(now, 5)})
    RETURNING id::text AS id`;
  if (!c1 || !c2 || !c3) throw new Error("dedup seed: clusters not inserted");
  const cluster1 = c1.id;
  const cluster2 = c2.id;

  // key, source, outcome, stage, cluster, minutes ago decided, decision ms
  const items: [string, string, string, string | null, string | null, number, number][] = [
    [k.canonical, "wire", "unique", null, cluster1, 50, 0.8],
    [k.exact, "daily", "duplicate", "exact", cluster1, 45, 0.6],
    [k.near, "tribune", "duplicate", "near", cluster1, 40, 2.4],
    [k.undone, "tribune", "unique", null, null, 37, 1.1],
    [k.urlCanonical, "wire", "unique", null, cluster2, 120, 0.7],
    [k.url, "daily", "duplicate", "url", cluster2, 110, 0.2],
    [k.unique1, "wire", "unique", null, null, 30, 1.3],
    [k.unique2, "daily", "unique", null, null, 20, 1.5],
    [k.reviewA, "wire", "unique", null, null, 15, 1.0],
    [k.reviewB, "daily", "review", "near", null, 10, 3.0],
    [k.reviewC, "tribune", "unique", null, null, 9, 0.9],
    [k.reviewD, "daily", "review", "near", null, 8, 2.8],
    [k.removed, "daily", "removed", null, null, 5, null as unknown as number],
    [k.old, "tribune", "unique", null, null, 30 * 60, 1.0],
  ];
  for (const [key, source, outcome, stage, cluster, minutes, ms] of items) {
    const first = news.find((n) => n[0] === key)?.[3] ?? minutes;
    await p.$executeRaw`
      INSERT INTO dedup_items (entry_key, version, source_id, first_seen_at, live, outcome, stage,
                               cluster_id, decided_at, decision_ms)
      VALUES (${key}, 1, ${source}, ${ago(now, first)}, ${key !== k.removed}, ${outcome}, ${stage},
              ${cluster}::bigint, ${ago(now, minutes)}, ${ms}::float8)`;
  }

  await p.$executeRaw`
    INSERT INTO dedup_links (entry_key, duplicate_of, matched_key, cluster_id, stage, score,
                             threshold, settings_revision, item_version, evidence, decided_at,
                             ended_at, ended_reason, ended_by)
    VALUES
      (${k.exact}, ${k.canonical}, ${k.canonical}, ${cluster1}::bigint, 'exact', 1, 1, 1, 1,
       NULL, ${ago(now, 45)}, NULL, NULL, NULL),
      (${k.near}, ${k.canonical}, ${k.exact}, ${cluster1}::bigint, 'near', 0.72, 0.5, 1, 1,
       ${JSON.stringify(DEDUP_SEED.evidence)}::jsonb, ${ago(now, 40)}, NULL, NULL, NULL),
      (${k.undone}, ${k.canonical}, ${k.canonical}, ${cluster1}::bigint, 'near', 0.52, 0.5, 1, 1,
       '{"hamming": 11, "shared": ["central", "bank", "rates"], "sharedPhrases": ["central bank"], "onlyA": ["moves", "again"], "onlyB": ["raises"]}'::jsonb,
       ${ago(now, 38)}, ${ago(now, 37)}, 'undone', 'admin'),
      (${k.url}, ${k.urlCanonical}, ${k.urlCanonical}, ${cluster2}::bigint, 'url', 1, 1, 1, 1,
       '{"urlKey": "wire.example/floods"}'::jsonb, ${ago(now, 110)}, NULL, NULL, NULL)`;
  await p.$executeRaw`
    UPDATE news SET duplicate_of = l.duplicate_of, dedup_stage = l.stage, dedup_score = l.score,
                    dedup_threshold = l.threshold, dedup_at = l.decided_at
    FROM dedup_links l WHERE l.entry_key = news.entry_key AND l.ended_at IS NULL`;
  await p.$executeRaw`
    INSERT INTO dedup_cluster_events (cluster_id, at, kind, entry_key, detail)
    VALUES (${cluster1}::bigint, ${ago(now, 45)}, 'created', ${k.canonical}, NULL),
           (${cluster1}::bigint, ${ago(now, 45)}, 'joined', ${k.exact}, '{"stage": "exact"}'::jsonb),
           (${cluster1}::bigint, ${ago(now, 40)}, 'joined', ${k.near}, '{"stage": "near"}'::jsonb),
           (${cluster1}::bigint, ${ago(now, 38)}, 'joined', ${k.undone}, '{"stage": "near"}'::jsonb),
           (${cluster1}::bigint, ${ago(now, 37)}, 'left', ${k.undone}, '{"reason": "undone"}'::jsonb)`;

  const pair = (a: string, b: string) => (a < b ? [a, b] : [b, a]) as [string, string];
  const [a1, b1] = pair(k.reviewB, k.reviewA);
  const [a2, b2] = pair(k.reviewD, k.reviewC);
  const [a3, b3] = pair(k.unique1, k.unique2);
  await p.$executeRaw`
    INSERT INTO dedup_reviews (entry_key, candidate_key, pair_a, pair_b, stage, score, threshold,
                               item_version, evidence, state, created_at, decided_at, decided_by)
    VALUES
      (${k.reviewB}, ${k.reviewA}, ${a1}, ${b1}, 'review', 0.46, 0.5, 1,
       '{"hamming": 14, "shared": ["port", "workers", "strike", "pay"], "sharedPhrases": ["port workers"], "onlyA": ["end", "after", "deal"], "onlyB": ["over", "for", "a", "third", "day"]}'::jsonb,
       'pending', ${ago(now, 10)}, NULL, NULL),
      (${k.reviewD}, ${k.reviewC}, ${a2}, ${b2}, 'review', 0.44, 0.5, 1,
       '{"hamming": 15, "shared": ["ministers", "meet", "fuel", "prices"], "sharedPhrases": ["fuel prices"], "onlyA": ["to", "over"], "onlyB": ["on"]}'::jsonb,
       'pending', ${ago(now, 8)}, NULL, NULL),
      (${k.unique2}, ${k.unique1}, ${a3}, ${b3}, 'review', 0.41, 0.5, 1, NULL,
       'rejected', ${ago(now, 19)}, ${ago(now, 18)}, 'admin')`;

  await p.$executeRaw`
    INSERT INTO dedup_settings (id, thresholds, revision, updated_at, updated_by)
    VALUES (1, ${JSON.stringify(DEDUP_SEED.thresholds)}::jsonb, 2,
            ${ago(now, 200)}, 'admin')`;
  const [run] = await p.$queryRaw<{ id: string }[]>`
    INSERT INTO dedup_runs (thresholds, dry_run, state, actor, started_at, ended_at, total,
                            scanned, appear, go, applied)
    VALUES (${JSON.stringify(DEDUP_SEED.runThresholds)}::jsonb, true,
            'finished', 'admin', ${ago(now, 3)}, ${ago(now, 2)}, 12, 12, 1, 1, 0)
    RETURNING id::text AS id`;
  if (!run) throw new Error("dedup seed: run not inserted");
  await p.$executeRaw`
    INSERT INTO dedup_run_changes (run_id, entry_key, change, before, after)
    VALUES (${run.id}::bigint, ${k.reviewB}, 'appear', NULL,
            ${JSON.stringify({ duplicateOf: k.reviewA, stage: "near", score: 0.46 })}::jsonb),
           (${run.id}::bigint, ${k.near}, 'go',
            ${JSON.stringify({ duplicateOf: k.canonical, stage: "near", score: 0.72 })}::jsonb, NULL)`;
  return { clusters: [cluster1, cluster2, c3.id] };
}
