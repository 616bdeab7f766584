import type { Database } from "@/lib/db";
import { DEFAULT_THRESHOLDS, type DedupThresholds, judge } from "@/lib/dedup";
import { edit, observe, retract } from "@/workers/store";

/**
 * Items for the dedup tests, written through the real writer (so versions, updated_at and the
 * NOTIFY are the writer's own), and reads of what the stage made of them.
 */
export const OUTLETS = ["wire", "daily", "star", "ittefaq", "observer"] as const;

export async function createOutlets(db: Database): Promise<void> {
  await db.prisma.source.createMany({
    data: OUTLETS.map((id) => ({ id, name: id, kind: "feed" })),
    skipDuplicates: true,
  });
}

export interface Written {
  entryKey: string;
  version: number;
}

export interface ItemFields {
  title?: string | null;
  summary?: string | null;
  link?: string | null;
  observedAt?: Date;
  origin?: "primary" | "poll" | "backfill" | "fallback";
}

let revision = 1;

export async function put(
  db: Database,
  sourceId: string,
  guid: string,
  f: ItemFields,
): Promise<Written> {
  const out = await observe(db, {
    sourceId,
    guid,
    collector: "A",
    origin: f.origin ?? "primary",
    title: f.title,
    summary: f.summary,
    link: f.link,
    observedAt: f.observedAt,
    revision: revision++,
  });
  if (out.result === "rejected") throw new Error(`test item refused: ${out.reason}`);
  return { entryKey: out.entryKey, version: out.version ?? (await versionOf(db, out.entryKey)) };
}

/** An edit (a newer source revision): the item's next version. */
export async function change(
  db: Database,
  sourceId: string,
  guid: string,
  f: ItemFields,
): Promise<Written> {
  const out = await edit(db, {
    sourceId,
    guid,
    collector: "A",
    origin: "primary",
    title: f.title,
    summary: f.summary,
    link: f.link,
    revision: revision++,
  });
  if (out.version === null) throw new Error(`the edit changed nothing (${out.result})`);
  return { entryKey: out.entryKey, version: out.version };
}

export async function tombstone(db: Database, sourceId: string, guid: string): Promise<Written> {
  const out = await retract(db, { sourceId, guid, collector: "A", origin: "primary" });
  if (out.version === null) throw new Error(`the retraction changed nothing (${out.result})`);
  return { entryKey: out.entryKey, version: out.version };
}

export async function versionOf(db: Database, entryKey: string): Promise<number> {
  const [row] = await db.prisma.$queryRaw<{ version: number }[]>`
    SELECT version FROM news WHERE entry_key = ${entryKey}`;
  if (!row) throw new Error(`no news row ${entryKey}`);
  return Number(row.version);
}

export interface ItemState {
  version: number;
  outcome: string;
  stage: string | null;
  live: boolean;
  clusterId: string | null;
  duplicateOf: string | null;
  newsStage: string | null;
}

export async function stateOf(db: Database, entryKey: string): Promise<ItemState | null> {
  const [row] = await db.prisma.$queryRaw<
    {
      version: number;
      outcome: string;
      stage: string | null;
      live: boolean;
      cluster_id: bigint | null;
      duplicate_of: string | null;
      dedup_stage: string | null;
    }[]
  >`
    SELECT d.version, d.outcome, d.stage, d.live, d.cluster_id, n.duplicate_of, n.dedup_stage
    FROM dedup_items d JOIN news n USING (entry_key) WHERE d.entry_key = ${entryKey}`;
  if (!row) return null;
  return {
    version: Number(row.version),
    outcome: row.outcome,
    stage: row.stage,
    live: row.live,
    clusterId: row.cluster_id === null ? null : String(row.cluster_id),
    duplicateOf: row.duplicate_of,
    newsStage: row.dedup_stage,
  };
}

/** What a test compares before and after a re-run: every dedup table's rows that matter. */
export async function snapshot(db: Database): Promise<unknown> {
  const q = (sql: string) => db.prisma.$queryRawUnsafe<unknown[]>(sql);
  return {
    items: await q(
      "SELECT entry_key, version, live, url_key, content_key, simhash::text, cluster_id::text, outcome, stage, settings_revision FROM dedup_items ORDER BY entry_key",
    ),
    links: await q(
      "SELECT id::text, entry_key, duplicate_of, matched_key, stage, ended_at IS NULL AS live FROM dedup_links ORDER BY id",
    ),
    clusters: await q(
      "SELECT id::text, canonical_key, members, outlets, dissolved_at IS NULL AS alive FROM dedup_clusters ORDER BY id",
    ),
    events: await q("SELECT count(*)::int AS n FROM dedup_cluster_events"),
    reviews: await q(
      "SELECT pair_a, pair_b, stage, state, item_version FROM dedup_reviews ORDER BY pair_a, pair_b",
    ),
    news: await q(
      "SELECT entry_key, duplicate_of, dedup_stage, dedup_score FROM news ORDER BY entry_key",
    ),
  };
}

/** Stories the tests use; variantOf makes near and grey copies of them. */
export const TEXTS = {
  strike: {
    title: "Chittagong port workers end three-day strike after wage deal",
    summary:
      "Dockworkers at the country's main seaport walked back to their posts on Tuesday after the shipping ministry agreed to raise allowances, ending a stoppage that had stranded hundreds of containers.",
  },
  rate: {
    title: "Central bank holds policy rate at 8.5 percent",
    summary:
      "The central bank kept its benchmark rate unchanged on Thursday, citing easing food inflation and a stable taka.",
  },
  flood: {
    title: "Flash floods cut off villages in Sunamganj as rivers burst banks",
    summary:
      "Heavy upstream rain pushed the Surma above the danger mark overnight, and district officials opened shelters in schools.",
  },
  cricket: {
    title: "Tigers clinch series with last-ball win in Mirpur",
    summary:
      "A boundary off the final delivery sealed a two-wicket victory and a 2-1 series result.",
  },
} as const;

export interface Text {
  title: string;
  summary: string;
}

const EXTRA =
  "officials said markets expected the decision while exporters want cheaper credit and analysts see cuts next quarter".split(
    " ",
  );

/**
 * A rewrite of `base` that lib/dedup judges `want` against it ('near': linked by stage 3;
 * 'review': inside the grey band), found by a seeded search over word drops and additions. The
 * tests ask for the judgement they are about instead of hard-coding texts, so tuning the
 * scorer (helper "algorithm") does not silently turn a near test into a unique one; when no
 * variant is found the test fails here, saying so.
 */
export function variantOf(
  base: Text,
  want: "near" | "review",
  seed = 1,
  thresholds: DedupThresholds = DEFAULT_THRESHOLDS,
  /** Only a variant stage 3 finds this way ('anchors': out of the bands' reach). */
  retrieval?: "bands" | "anchors",
): Text {
  let state = seed;
  const rnd = () => {
    state = (state * 1_103_515_245 + 12_345) % 2_147_483_648;
    return state / 2_147_483_648;
  };
  const words = `${base.title} ${base.summary}`.split(" ");
  const titleWords = base.title.split(" ").length;
  for (let i = 0; i < 20_000; i++) {
    const keep = want === "near" ? 0.7 + 0.3 * rnd() : 0.35 + 0.4 * rnd();
    const kept = words.filter(() => rnd() < keep);
    const added = EXTRA.filter(() => rnd() < (want === "near" ? 0.1 : 0.4));
    const v = {
      title: kept.slice(0, titleWords - 1).join(" "),
      summary: [...kept.slice(titleWords - 1), ...added].join(" "),
    };
    if (!v.title || !v.summary) continue;
    const j = judge(base, v, thresholds) as ReturnType<typeof judge> & { retrieval?: string };
    if (j.stage === want && (retrieval === undefined || j.retrieval === retrieval)) return v;
  }
  throw new Error(
    `no ${want} variant${retrieval ? ` by ${retrieval}` : ""} of "${base.title}" under these thresholds`,
  );
}

/**
 * Made-up words from a seeded generator (mulberry32): stories that share no word with each
 * other, so a test's copies can only match their own story. (A plain LCG's low bits repeat
 * within a few dozen letters, which made "different" stories shifted copies of each other.)
 */
export function madeUpWords(seed: number): () => string {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
  return () => {
    let w = "";
    for (let k = 0; k < 7; k++) w += String.fromCharCode(97 + Math.floor(next() * 26));
    return w;
  };
}
