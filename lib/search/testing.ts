import type { Database } from "@/lib/db";
import type { ModelInfo } from "@/lib/embed/types";
import { Random } from "@/simulator/random";
import { storeSearchDocs } from "./docs";
import { storeVectors } from "./vectors";

/** Test and benchmark helpers for lib/search: models as rows, and seeded unit vectors. */

/** Registers a model as the embed stage would, in the state asked; returns its id. */
export async function insertModel(
  db: Database,
  info: Pick<ModelInfo, "model" | "dims" | "kind"> & Partial<ModelInfo>,
  state: "backfilling" | "complete" | "retired" = "complete",
  completedAt: Date | null = state === "complete" ? new Date() : null,
): Promise<number> {
  const [provider = "lexical", rest = info.model] = info.model.split(":");
  const [name = rest, version = "1"] = rest.split("@");
  const rows = await db.prisma.$queryRaw<{ id: number }[]>`
    INSERT INTO embedding_models (model, provider, name, version, dims, kind, languages,
                                  cross_lingual, state, backfill_started_at,
                                  backfill_completed_at)
    VALUES (${info.model}, ${info.provider ?? provider}, ${info.name ?? name},
            ${info.version ?? version}, ${info.dims}, ${info.kind},
            ${info.languages ?? ["en"]}::text[], ${info.crossLingual ?? false}, ${state}, now(),
            ${completedAt})
    RETURNING id`;
  return rows[0]?.id as number;
}

/** A seeded random unit vector. */
export function randomUnit(r: Random, dims: number): Float32Array {
  const v = new Float32Array(dims);
  let sum = 0;
  for (let i = 0; i < dims; i++) {
    // The sum of three uniforms: close enough to a normal for directions spread over the sphere.
    const x = r.next() + r.next() + r.next() - 1.5;
    v[i] = x;
    sum += x * x;
  }
  const n = Math.sqrt(sum);
  for (let i = 0; i < dims; i++) v[i] = (v[i] as number) / n;
  return v;
}

/** `base` moved by `noise` (0: itself; 1: about as far again as its own length), unit length. */
export function near(r: Random, base: Float32Array, noise: number): Float32Array {
  const offset = randomUnit(r, base.length);
  const v = new Float32Array(base.length);
  let sum = 0;
  for (let i = 0; i < base.length; i++) {
    const x = (base[i] as number) + noise * (offset[i] as number);
    v[i] = x;
    sum += x * x;
  }
  const n = Math.sqrt(sum);
  for (let i = 0; i < base.length; i++) v[i] = (v[i] as number) / n;
  return v;
}

/** Exact cosine nearest neighbours in memory: what the stored paths are checked against. */
export function bruteForce(
  rows: readonly { entryKey: string; vector: Float32Array }[],
  q: Float32Array,
  k: number,
): { entryKey: string; similarity: number }[] {
  return rows
    .map((r) => {
      let dot = 0;
      for (let i = 0; i < q.length; i++) dot += (q[i] as number) * (r.vector[i] as number);
      return { entryKey: r.entryKey, similarity: dot };
    })
    .sort((a, b) => b.similarity - a.similarity || (a.entryKey < b.entryKey ? -1 : 1))
    .slice(0, k);
}

export { Random };

// ---------------------------------------------------------------------------------------------
// A small corpus as the pipeline leaves it: news rows, dedup decisions (one story carried by
// three outlets), search documents for the survivors, and vectors by any embedder.

/** A 64-hex entry key from a small number (the Items page links by such keys). */
export const searchKey = (n: number) => `5ea2c4${n.toString(16).padStart(58, "0")}`;

export interface CorpusItem {
  n: number;
  source: string;
  title: string;
  summary: string;
  lang: "en" | "bn";
  /** Hand-made "meaning" for tests that give vectors directly: the story's topic. */
  topic: "port" | "rates" | "floods" | "cricket" | "prices" | "fire";
  minutesAgo: number;
  /** The story's canonical item, for a member of a cluster. */
  duplicateOf?: number;
  /** Indexed for full text (a survivor); a duplicate linked at once has no document. */
  indexed: boolean;
}

export const SEARCH_CORPUS: readonly CorpusItem[] = [
  {
    n: 1,
    source: "wire",
    title: "Dockworkers walk off the job at Chittagong port",
    summary: "Loading stopped at the country's main seaport as workers demanded higher wages.",
    lang: "en",
    topic: "port",
    minutesAgo: 90,
    indexed: true,
  },
  {
    n: 2,
    source: "daily",
    title: "Dockworkers walk off the job at Chittagong port",
    summary: "Loading stopped at the country's main seaport as workers demanded higher wages.",
    lang: "en",
    topic: "port",
    minutesAgo: 80,
    duplicateOf: 1,
    indexed: false,
  },
  {
    // A survivor when indexed, linked to the story later: search must fold it into the story.
    n: 3,
    source: "tribune",
    title: "Chittagong port labourers stage walkout over pay",
    summary: "Cargo handling halted on Monday.",
    lang: "en",
    topic: "port",
    minutesAgo: 70,
    duplicateOf: 1,
    indexed: true,
  },
  {
    n: 4,
    source: "wire",
    title: "Central bank raises interest rates by a quarter point",
    summary: "The policy rate rises to 8.5 percent in a bid to cool inflation.",
    lang: "en",
    topic: "rates",
    minutesAgo: 60,
    indexed: true,
  },
  {
    n: 5,
    source: "daily",
    title: "Heavy rain floods low-lying parts of Sylhet",
    summary: "Thousands of families moved to shelters as rivers rose.",
    lang: "en",
    topic: "floods",
    minutesAgo: 50,
    indexed: true,
  },
  {
    n: 6,
    source: "prothom",
    title: "সিলেটে বন্যায় লাখো মানুষ পানিবন্দী",
    summary: "ভারী বৃষ্টিতে নিম্নাঞ্চল প্লাবিত, আশ্রয়কেন্দ্রে হাজারো পরিবার।",
    lang: "bn",
    topic: "floods",
    minutesAgo: 45,
    indexed: true,
  },
  {
    n: 7,
    source: "tribune",
    title: "Cricket team clinches series against Zimbabwe",
    summary: "A century from the captain sealed the third match.",
    lang: "en",
    topic: "cricket",
    minutesAgo: 40,
    indexed: true,
  },
  {
    n: 8,
    source: "daily",
    title: "Onion prices jump ahead of Eid",
    summary: "Traders blame lower imports for the rise at Dhaka's markets.",
    lang: "en",
    topic: "prices",
    minutesAgo: 30,
    indexed: true,
  },
  {
    n: 9,
    source: "wire",
    title: "Factory fire kills ten workers in Gazipur",
    summary: "Firefighters needed four hours to bring the blaze under control.",
    lang: "en",
    topic: "fire",
    minutesAgo: 20,
    indexed: true,
  },
  {
    n: 10,
    source: "prothom",
    title: "চট্টগ্রাম বন্দরে শ্রমিকদের ধর্মঘট",
    summary: "মজুরি বাড়ানোর দাবিতে পণ্য খালাস বন্ধ।",
    lang: "bn",
    topic: "port",
    minutesAgo: 10,
    indexed: true,
  },
];

export const CORPUS_SOURCES = [
  { id: "wire", name: "The Wire" },
  { id: "daily", name: "The Daily" },
  { id: "tribune", name: "The Tribune" },
  { id: "prothom", name: "Prothom Desk" },
] as const;

const minutesBefore = (now: Date, minutes: number) => new Date(now.getTime() - minutes * 60_000);

/** Writes the corpus; returns the story cluster's id. */
export async function seedSearchCorpus(
  db: Database,
  now = new Date(),
): Promise<{ clusterId: string }> {
  await db.prisma.source.createMany({
    data: CORPUS_SOURCES.map((s) => ({ id: s.id, name: s.name, kind: "feed" })),
    skipDuplicates: true,
  });
  for (const item of SEARCH_CORPUS) {
    const key = searchKey(item.n);
    await db.prisma.$executeRaw`
      INSERT INTO news (entry_key, source_id, canonical_id, quality, title, link, summary, language,
                        version, first_seen_at, published_at, first_source, first_collector,
                        last_result, duplicate_of, updated_at)
      VALUES (${key}, ${item.source}, ${`guid-${item.n}`}, 'authoritative', ${item.title},
              ${`https://${item.source}.example/news/${item.n}`}, ${item.summary}, ${item.lang}, 1,
              ${minutesBefore(now, item.minutesAgo)}, ${minutesBefore(now, item.minutesAgo + 5)},
              ${item.source}, 'A', 'inserted',
              ${item.duplicateOf ? searchKey(item.duplicateOf) : null},
              ${minutesBefore(now, item.minutesAgo)})`;
  }
  const members = SEARCH_CORPUS.filter((i) => i.duplicateOf === 1 || i.n === 1);
  const [cluster] = await db.prisma.$queryRaw<{ id: string }[]>`
    INSERT INTO dedup_clusters (canonical_key, members, outlets, first_seen_at)
    VALUES (${searchKey(1)}, ${members.length}, ${new Set(members.map((m) => m.source)).size},
            ${minutesBefore(now, 90)})
    RETURNING id::text AS id`;
  const clusterId = cluster?.id as string;
  for (const item of SEARCH_CORPUS) {
    const inCluster = members.includes(item);
    await db.prisma.$executeRaw`
      INSERT INTO dedup_items (entry_key, version, source_id, first_seen_at, live, outcome, stage,
                               cluster_id, decision_ms)
      VALUES (${searchKey(item.n)}, 1, ${item.source}, ${minutesBefore(now, item.minutesAgo)}, true,
              ${item.duplicateOf ? "duplicate" : "unique"}, ${item.duplicateOf ? "near" : null},
              ${inCluster ? clusterId : null}::bigint, 1)`;
  }
  await storeSearchDocs(
    db,
    SEARCH_CORPUS.filter((i) => i.indexed).map((i) => ({
      entryKey: searchKey(i.n),
      itemVersion: 1,
      sourceId: i.source,
      lang: i.lang,
      firstSeenAt: minutesBefore(now, i.minutesAgo),
      title: i.title,
      summary: i.summary,
    })),
  );
  return { clusterId };
}

/** Every indexed item's vector by `embed` (title and summary, as the embed stage takes them). */
export async function storeCorpusVectors(
  db: Database,
  modelId: number,
  embed: (texts: string[]) => Promise<Float32Array[]>,
  now = new Date(),
): Promise<void> {
  const items = SEARCH_CORPUS.filter((i) => i.indexed);
  const vectors = await embed(items.map((i) => `${i.title}. ${i.summary}`));
  await storeVectors(
    db,
    items.map((i, j) => ({
      modelId,
      entryKey: searchKey(i.n),
      itemVersion: 1,
      vector: vectors[j] as Float32Array,
      lang: i.lang,
      sourceId: i.source,
      firstSeenAt: minutesBefore(now, i.minutesAgo),
    })),
  );
}

const TOPICS: CorpusItem["topic"][] = ["port", "rates", "floods", "cricket", "prices", "fire"];

/** A hand-made "meaning" vector: the topic's axis, nudged per item so no two are equal. */
export function topicVector(topic: CorpusItem["topic"], nudge = 0): Float32Array {
  const v = new Float32Array(TOPICS.length + 1);
  v[TOPICS.indexOf(topic)] = 1;
  v[TOPICS.length] = nudge;
  const n = Math.hypot(...v);
  return v.map((x) => x / n);
}
