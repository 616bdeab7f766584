import type { Database } from "@/lib/db";
import {
  analyze,
  anchors as anchorsOf,
  type DedupThresholds,
  fromSigned64,
  type ItemKeys,
  itemKeys,
  itemText,
  type JudgeInput,
  type Judgement,
  judge,
  retrievedBy,
} from "@/lib/dedup";
import { emit } from "@/lib/events";
import { Prisma } from "@/lib/generated/prisma/client";
import type { ItemJob, Stage, StageVerdict } from "@/workers/line/stage";
import { PermanentJobError } from "@/workers/queue/queueWorker";
import { writeAnchorsAll } from "./anchors";
import { Batcher } from "./batcher";
import { nearAll } from "./batchLookup";
import { linkItem, removeItem, type Tx, unlinkItem } from "./clusters";
import {
  currentAll,
  decidedPairs,
  finishAll,
  openReviews,
  pairKey,
  type ReviewRow,
  type StoredDecision,
  writeKeysAll,
} from "./decision";
import { lockAll, lockNames } from "./locks";
import {
  byKeysAll,
  type Candidate,
  type CandidateText,
  candidateTexts,
  type ItemText,
  type Probe,
} from "./lookup";
import type { MeaningComparer } from "./meaning";
import { ThresholdsCache } from "./settings";
import { inTransaction, sideReaders } from "./transaction";

export const DEDUP_STAGE = "dedup";

export interface DedupStageOptions {
  /** The meaning comparison for grey-band pairs; none: they go to review. */
  meaning?: MeaningComparer;
  /**
   * Stage 4's own pass (meaningStage.ts), after embed: items the stage left in review are
   * decided again at the same version, with `meaning`, once per version and model (recorded in
   * dedup_items.meaning_version / meaning_model_id).
   */
  meaningPass?: { stageName: string; modelId: number };
  /** Stages survivors are handed on to (none yet: embed, extract, index come later). */
  handsOn?: readonly string[];
  /** Jobs held at once per process (claimed together, decided in batches). */
  concurrency?: number;
  /** Items decided in one transaction at most, and such transactions at once (batcher.ts). */
  batch?: { maxBatch?: number; maxInFlight?: number };
  /** The job's lease (default 30 s; heartbeats keep a slow decision's). */
  leaseSeconds?: number;
}

interface NewsItem extends ItemText {
  version: number;
  firstSeenAt: Date;
  deletedAt: Date | null;
}

/** What the cascade settled for an item. */
interface Decision {
  outcome: "unique" | "duplicate" | "review" | "removed";
  stage: string | null;
  verdict: StageVerdict;
}

const SURVIVES = new Set(["unique", "review"]);

/**
 * The dedup stage of the line: for item@version, the cascade in order of cost (URL key, content
 * key, SimHash bands, then the meaning hook for the grey band), across all sources (an outlet
 * re-posting its own story is a duplicate too), linking a match into its cluster through
 * clusters.ts. Jobs are decided in batches (batcher.ts: the jobs that arrive while a batch is
 * being decided go together in the next), one transaction per batch, serialised with every
 * decision that could find one of its items by advisory locks on their keys (locks.ts), so two
 * copies of one story decided at once end as one cluster, not two uniques. Survivors (unique,
 * canonical, or waiting for review) go on; duplicates and tombstones stop here.
 */
export function dedupStage(db: Database, options: DedupStageOptions = {}): Stage {
  const settings = new ThresholdsCache();
  const pglite = db.kind === "pglite";
  // PGlite runs one transaction at a time on its one connection: one batch at a time there, and
  // small ones, so the writer's statements do not wait long behind a decision.
  const concurrency = options.concurrency ?? (pglite ? 8 : 64);
  const inFlight = options.batch?.maxInFlight ?? (pglite ? 1 : 2);
  const batcher = new Batcher<Submitted, StageVerdict>(
    (jobs) => decideBatch(db, jobs, settings, options.meaning, inFlight, options.meaningPass),
    {
      maxBatch: options.batch?.maxBatch ?? (pglite ? 8 : 32),
      // Two on PostgreSQL: the second usually waits for the first's locks (two batches nearly
      // always share a coarse band name, locks.ts), but its reads and analysis, before the locks,
      // overlap the first's transaction (bench dedup: +14 % decisions/s over one at a time).
      maxInFlight: inFlight,
    },
  );
  return {
    name: DEDUP_STAGE,
    handsOn: options.handsOn ?? [],
    concurrency,
    leaseSeconds: options.leaseSeconds ?? 30,
    retry: { baseDelaySeconds: 2, maxDelaySeconds: 10 * 60 },
    handle: (job) => batcher.submit({ job, at: performance.now() }),
    // Every version of every stored item, backfill included (it never notifies), that has no
    // decision of the stage at that version. A row clusters.ts made for an operator's link
    // before the stage saw the item has no decision_ms: it is still the stage's to key.
    pending: (since) => Prisma.sql`
      SELECT n.entry_key, n.version, n.source_id, n.updated_at AS at
      FROM news n LEFT JOIN dedup_items d ON d.entry_key = n.entry_key
      WHERE n.updated_at > ${since}
        AND (d.entry_key IS NULL OR d.version < n.version OR d.decision_ms IS NULL)`,
    horizon: () => Prisma.sql`SELECT max(updated_at) FROM news`,
  };
}

/** A job handed to the stage, and when (its decision's time counts from here). */
interface Submitted {
  job: ItemJob;
  at: number;
}

type Answer = StageVerdict | Error;

/** An item the batch decides: what was read and computed for it before the transaction. */
interface Work {
  job: ItemJob;
  at: number;
  item: NewsItem;
  analyzed: ReturnType<typeof analyze>;
  keys: ItemKeys;
  removal: "retracted" | "empty" | null;
  before: { keys: ItemKeys; anchors: number[] } | null;
  /** Set in the transaction, with the thresholds in force. */
  anchors: number[];
  stored: StoredDecision | null;
}

/**
 * Decides a batch of jobs (batcher.ts): what needs no lock (the items' rows, keys, shingles)
 * first, then one transaction for the whole batch: one advisory-lock statement for every name
 * any of its items could be found by, the lookups of every item in one round trip per stage, and
 * the links one after another. Within the batch, items are decided in order of first sight, each
 * against the window and against the batch's earlier items (compared here, by the same keys and
 * retrieval rule the lookups use), so two copies of one story in one batch end as one cluster,
 * with the first seen its canonical, exactly as if they had been decided one after another.
 */
async function decideBatch(
  db: Database,
  jobs: Submitted[],
  settings: ThresholdsCache,
  meaning: MeaningComparer | undefined,
  inFlight: number,
  pass: DedupStageOptions["meaningPass"],
): Promise<Answer[]> {
  const answers: (Answer | undefined)[] = new Array(jobs.length);
  const keys = [...new Set(jobs.map((s) => s.job.entryKey))];
  const [items, before] = await Promise.all([readItems(db, keys), storedKeysAll(db, keys)]);
  const works = new Map<string, Work>();
  const answeredBy = new Map<string, number[]>();
  jobs.forEach(({ job, at }, i) => {
    const item = items.get(job.entryKey);
    if (!item) {
      answers[i] = new PermanentJobError(`dedup: no news row ${job.entryKey}`, "no_item");
    } else if (item.version > job.version) {
      answers[i] = "superseded";
    } else if (item.version < job.version) {
      answers[i] = new PermanentJobError(
        `dedup: job for version ${job.version} of ${job.entryKey}, which is at ${item.version}`,
        "bad_version",
      );
    } else {
      if (!works.has(job.entryKey)) {
        // Keys and shingles are CPU work: done before the transaction, so locks are held for I/O.
        const analyzed = analyze(itemText(item));
        const k = itemKeys(item, analyzed);
        works.set(job.entryKey, {
          job,
          at,
          item,
          analyzed,
          keys: k,
          removal: item.deletedAt !== null ? "retracted" : k.contentKey === null ? "empty" : null,
          before: before.get(job.entryKey) ?? null,
          anchors: [],
          stored: null,
        });
      }
      answeredBy.set(job.entryKey, [...(answeredBy.get(job.entryKey) ?? []), i]);
    }
  });
  if (works.size === 0) return answers as Answer[];

  const decided = await inTransaction(
    db,
    (tx) =>
      decideInTransaction(
        tx,
        [...works.values()],
        settings,
        meaning,
        sideReaders(db, 2, inFlight),
        pass,
      ),
    {
      // Lock waits behind other decisions and, on PGlite, behind every other transaction (one
      // connection): Prisma's defaults (2 s to start, 5 s to finish) would fail busy moments.
      timeoutMs: 25_000,
    },
  );
  const now = performance.now();
  for (const [entryKey, d] of decided) {
    const verdict = d === "stale" ? "superseded" : typeof d === "string" ? d : d.verdict;
    if (typeof d === "object") {
      emit("dedup:decided", {
        stage: d.stage,
        outcome: d.outcome,
        ms: now - (works.get(entryKey) as Work).at,
      });
    }
    for (const i of answeredBy.get(entryKey) ?? []) answers[i] = verdict;
  }
  return answers.map((a) => a ?? new Error("dedup: the batch left an item undecided"));
}

type Decided = Decision | "stale" | StageVerdict;

async function decideInTransaction(
  tx: Tx,
  works: Work[],
  settings: ThresholdsCache,
  meaning: MeaningComparer | undefined,
  readers: Tx[] | null,
  pass?: DedupStageOptions["meaningPass"],
): Promise<Map<string, Decided>> {
  const { thresholds, revision } = await settings.read(tx);
  const { radius, minShared } = thresholds.retrieval;
  const names: string[] = [];
  for (const w of works) {
    w.anchors = w.removal === null ? anchorsOf(w.analyzed, thresholds.retrieval.anchors) : [];
    names.push(...lockNames(w.job.entryKey, w.keys, radius, w.anchors, minShared));
    // The old keys too: a decision that found this item by them waits for this change.
    if (w.before) {
      names.push(...lockNames(w.job.entryKey, w.before.keys, radius, w.before.anchors, minShared));
    }
  }
  await lockAll(tx, names);

  // Under the locks: a newer version written meanwhile has its own job, and a decision already
  // stored for this version (the job ran before) is not made twice.
  const result = new Map<string, Decided>();
  const states = await currentAll(
    tx,
    works.map((w) => w.job.entryKey),
  );
  let deciding: Work[] = [];
  for (const w of works) {
    const state = states.get(w.job.entryKey);
    const stored = state?.stored ?? null;
    if (!state || state.newsVersion === null || state.newsVersion > w.job.version) {
      result.set(w.job.entryKey, "stale");
    } else if (
      stored?.decided &&
      stored.version >= w.job.version &&
      !(
        pass &&
        stored.version === w.job.version &&
        stored.outcome === "review" &&
        (stored.meaningVersion ?? 0) < w.job.version
      )
    ) {
      result.set(
        w.job.entryKey,
        stored.version > w.job.version
          ? "stale"
          : SURVIVES.has(stored.outcome)
            ? "survived"
            : "dropped",
      );
    } else {
      w.stored = stored;
      deciding.push(w);
    }
  }
  deciding.sort(
    (a, b) =>
      a.item.firstSeenAt.getTime() - b.item.firstSeenAt.getTime() ||
      (a.job.entryKey < b.job.entryKey ? -1 : a.job.entryKey > b.job.entryKey ? 1 : 0),
  );
  const written = await writeKeysAll(
    tx,
    Boolean(pass),
    deciding.map((w) => ({
      entryKey: w.job.entryKey,
      version: w.job.version,
      sourceId: w.item.sourceId,
      firstSeenAt: w.item.firstSeenAt,
      live: w.removal === null,
      keys: w.keys,
    })),
  );
  for (const w of deciding) if (!written.has(w.job.entryKey)) result.set(w.job.entryKey, "stale");
  deciding = deciding.filter((w) => written.has(w.job.entryKey));
  if (deciding.length === 0) return result;
  await writeAnchorsAll(
    tx,
    deciding.map((w) => ({
      entryKey: w.job.entryKey,
      firstSeenAt: w.item.firstSeenAt,
      anchors: w.removal === null ? w.anchors : null,
    })),
  );

  const matches = await cascadeAll(tx, deciding, thresholds, revision, meaning, readers);
  const finished: { entryKey: string; outcome: string; stage: string | null; ms: number }[] = [];
  const reviews: ReviewRow[] = [];
  for (const w of deciding) {
    const d =
      w.removal !== null
        ? await remove(tx, w.job.entryKey, w.removal)
        : await apply(
            tx,
            w,
            matches.get(w.job.entryKey) ?? { match: null, greys: [] },
            revision,
            reviews,
          );
    finished.push({
      entryKey: w.job.entryKey,
      outcome: d.outcome,
      stage: d.stage,
      ms: performance.now() - w.at,
    });
    result.set(w.job.entryKey, d);
  }
  await openReviews(tx, reviews);
  await finishAll(tx, finished, revision, pass?.modelId);
  return result;
}

async function remove(tx: Tx, entryKey: string, why: "retracted" | "empty"): Promise<Decision> {
  await removeItem(tx, entryKey, why);
  return { outcome: "removed", stage: null, verdict: "dropped" };
}

interface Match {
  matchedKey: string;
  stage: string;
  score: number;
  threshold: number;
  evidence: unknown;
  /** Who decided, when not the stage (an operator's confirmed review). */
  decidedBy?: string;
}

interface Grey {
  candidate: ItemText;
  judgement: Judgement;
}

interface Settled {
  match: Match | null;
  /** The grey-band pairs, when nothing matched: they go to review. */
  greys: Grey[];
}

/**
 * A candidate's text analysed as judge needs it (words, shingles, keys, anchors), kept for the
 * candidates of the next decisions: a story's items are each other's candidates for as long as
 * it runs, and analysing a text costs more than scoring a pair. Keyed by item, checked against
 * the text (an edit is analysed again); the oldest entry goes first past CANDIDATE_CACHE.
 */
const CANDIDATE_CACHE = 4_000;
const analysed = new Map<string, { text: string; count: number; input: JudgeInput }>();

function prepared(c: CandidateText, t: DedupThresholds): JudgeInput {
  const text = `${c.title ?? ""}\u0000${c.summary ?? ""}\u0000${c.link ?? ""}`;
  const count = t.retrieval.anchors;
  const hit = analysed.get(c.entryKey);
  if (hit && hit.text === text && hit.count === count) {
    analysed.delete(c.entryKey);
    analysed.set(c.entryKey, hit);
    return hit.input;
  }
  const a = analyze(itemText(c));
  // The stored keys and anchors when they are this text's: no SimHash or anchors made again.
  const { keys, anchors, ...item } = c;
  const input: JudgeInput = {
    ...item,
    analyzed: a,
    keys: keys ?? itemKeys(c, a),
    anchors: anchors ?? anchorsOf(a, count),
  };
  analysed.set(c.entryKey, { text, count, input });
  if (analysed.size > CANDIDATE_CACHE) analysed.delete(analysed.keys().next().value as string);
  return input;
}

function within(a: Date, b: Date, t: DedupThresholds): boolean {
  return Math.abs(a.getTime() - b.getTime()) <= t.windowHours * 3_600_000;
}

/**
 * Stages 1–4 for every live item of the batch, each stage only for what the earlier ones could
 * not settle: the lookups for all items at once (lookup.ts, batchLookup.ts: the batch's own items
 * left out of them), the batch's earlier items compared here by the same rules, then the pairs
 * judged (lib/dedup judge). Pure but for the reads: what to link is applied afterwards, in order.
 */
async function cascadeAll(
  tx: Tx,
  deciding: Work[],
  thresholds: DedupThresholds,
  revision: number,
  meaning: MeaningComparer | undefined,
  readers: Tx[] | null,
): Promise<Map<string, Settled>> {
  const exclude = deciding.map((w) => w.job.entryKey);
  const live = deciding.filter((w) => w.removal === null);
  const probe = (w: Work): Probe => ({
    entryKey: w.job.entryKey,
    firstSeenAt: w.item.firstSeenAt,
    keys: w.keys,
    exclude,
  });
  const settled = new Map<string, Settled>();
  if (live.length === 0) return settled;

  // The batch's earlier items each one could be matched with, by key or by stage 3's retrieval.
  const earlier = new Map<string, { url: Work[]; exact: Work[]; near: Work[] }>();
  const batchPairs: [string, string][] = [];
  live.forEach((w, i) => {
    const found = { url: [] as Work[], exact: [] as Work[], near: [] as Work[] };
    for (const e of live.slice(0, i)) {
      const key = e.job.entryKey;
      if (w.keys.urlKey !== null && e.keys.urlKey === w.keys.urlKey) found.url.push(e);
      else if (!within(w.item.firstSeenAt, e.item.firstSeenAt, thresholds)) continue;
      else if (w.keys.contentKey !== null && e.keys.contentKey === w.keys.contentKey)
        found.exact.push(e);
      else if (
        w.keys.simhash !== null &&
        e.keys.simhash !== null &&
        retrievedBy(
          { simhash: w.keys.simhash, anchors: w.anchors },
          { simhash: e.keys.simhash, anchors: e.anchors },
          thresholds,
        ) !== null
      )
        found.near.push(e);
      else continue;
      batchPairs.push([w.job.entryKey, key]);
    }
    earlier.set(w.job.entryKey, found);
  });
  const { rejected, confirmed } = await decidedPairs(tx, batchPairs);
  const allowed = (w: Work, e: Work) => !rejected.has(pairKey(w.job.entryKey, e.job.entryKey));

  const keyed = await byKeysAll(tx, live.map(probe), thresholds);
  const needNear: Work[] = [];
  for (const w of live) {
    const db = keyed.get(w.job.entryKey);
    const mine = earlier.get(w.job.entryKey) as { url: Work[]; exact: Work[]; near: Work[] };
    const url = db?.url?.entryKey ?? mine.url.find((e) => allowed(w, e))?.job.entryKey;
    const exact = db?.exact?.entryKey ?? mine.exact.find((e) => allowed(w, e))?.job.entryKey;
    if (url) {
      settled.set(w.job.entryKey, {
        match: {
          matchedKey: url,
          stage: "url",
          score: 1,
          threshold: 1,
          evidence: { urlKey: w.keys.urlKey },
        },
        greys: [],
      });
    } else if (exact) {
      settled.set(w.job.entryKey, {
        match: {
          matchedKey: exact,
          stage: "exact",
          score: 1,
          threshold: 1,
          evidence: { contentKey: w.keys.contentKey },
        },
        greys: [],
      });
    } else {
      needNear.push(w);
    }
  }
  if (needNear.length === 0) return settled;

  // Stage 3: both lookups for every item in one round trip, one candidate list each, judged alike.
  // The lookups read none of this transaction's writes (the batch is left out of them), so they
  // may run on other connections, in parallel: the server's work of a batch is mostly these.
  const nearProbes = needNear.map((w) => ({ probe: probe(w), anchors: w.anchors }));
  const near = new Map<string, Candidate[]>();
  if (readers && nearProbes.length > 1) {
    const parts = readers.map((_, i) => nearProbes.filter((_, j) => j % readers.length === i));
    const found = await Promise.all(
      parts.map((part, i) => nearAll(readers[i] as Tx, part, thresholds)),
    );
    for (const m of found) for (const [k, v] of m) near.set(k, v);
  } else {
    for (const [k, v] of await nearAll(tx, nearProbes, thresholds)) near.set(k, v);
  }
  const candidates = await candidateTexts(
    tx,
    [...new Set([...near.values()].flatMap((list) => list.map((c) => c.entryKey)))],
    revision,
  );
  const greyPairs: [string, string][] = [];
  const judgedOf = new Map<string, Grey[]>();
  for (const w of needNear) {
    const self = { ...w.item, keys: w.keys, analyzed: w.analyzed, anchors: w.anchors };
    const judged: Grey[] = [];
    for (const c of near.get(w.job.entryKey) ?? []) {
      const candidate = candidates.get(c.entryKey);
      if (!candidate) continue;
      const judgement = judge(self, prepared(candidate, thresholds), thresholds);
      if (judgement.stage !== null) judged.push({ candidate, judgement });
    }
    for (const e of (earlier.get(w.job.entryKey) as { near: Work[] }).near) {
      if (!allowed(w, e)) continue;
      const judgement = judge(
        self,
        { ...e.item, keys: e.keys, analyzed: e.analyzed, anchors: e.anchors },
        thresholds,
      );
      if (judgement.stage !== null) judged.push({ candidate: e.item, judgement });
    }
    // Highest score first; on a tie, the nearer SimHash (the lookup's order), the window first.
    judged.sort((x, y) => y.judgement.score - x.judgement.score);
    judgedOf.set(w.job.entryKey, judged);
    if (!judged.some((j) => j.judgement.duplicate)) {
      for (const g of judged) greyPairs.push([w.job.entryKey, g.candidate.entryKey]);
    }
  }
  // A grey pair an operator confirmed stays linked through an edit that keeps it grey.
  const operators = await decidedPairs(
    tx,
    greyPairs.filter(([a, b]) => !confirmed.has(pairKey(a, b))),
  );
  for (const [k, by] of operators.confirmed) confirmed.set(k, by);

  for (const w of needNear) {
    const judged = judgedOf.get(w.job.entryKey) ?? [];
    const best = judged.find((j) => j.judgement.duplicate);
    if (best) {
      settled.set(w.job.entryKey, {
        match: matchOf(best, best.judgement.stage ?? "near"),
        greys: [],
      });
      continue;
    }
    const ok = confirmedOf(w.job.entryKey, judged, confirmed);
    if (ok) {
      settled.set(w.job.entryKey, { match: ok, greys: [] });
      continue;
    }
    let match: Match | null = null;
    const greys: Grey[] = [];
    if (meaning) {
      for (const g of judged) {
        const verdict = await meaning.compare(w.item, g.candidate, {
          tx,
          itemVersion: w.job.version,
          near: g.judgement.score,
          guard: g.judgement.evidence?.opposed
            ? "opposed"
            : g.judgement.evidence?.swapped
              ? "swapped"
              : null,
          thresholds,
          settingsRevision: revision,
        });
        if (verdict?.duplicate) {
          match = {
            matchedKey: g.candidate.entryKey,
            stage: "meaning",
            score: verdict.score,
            threshold: verdict.threshold,
            evidence: { ...verdict.evidence, near: g.judgement.score },
          };
          break;
        }
        // Distinct by meaning: settled, not a question for an operator.
        if (!verdict?.distinct) greys.push(g);
      }
    } else {
      greys.push(...judged);
    }
    settled.set(w.job.entryKey, { match, greys: match ? [] : greys });
  }
  return settled;
}

function matchOf(g: Grey, stage: string): Match {
  return {
    matchedKey: g.candidate.entryKey,
    stage,
    score: g.judgement.score,
    threshold: g.judgement.threshold,
    evidence: { hamming: g.judgement.hamming, ...g.judgement.evidence },
  };
}

function confirmedOf(
  entryKey: string,
  greys: Grey[],
  confirmed: Map<string, string | null>,
): Match | null {
  const g = greys.find((x) => confirmed.has(pairKey(entryKey, x.candidate.entryKey)));
  if (!g) return null;
  return {
    ...matchOf(g, "review"),
    decidedBy: confirmed.get(pairKey(entryKey, g.candidate.entryKey)) ?? undefined,
  };
}

/** What the cascade settled for one item, applied: its link, its leaving, its reviews. */
async function apply(
  tx: Tx,
  w: Work,
  s: Settled,
  revision: number,
  reviews: ReviewRow[],
): Promise<Decision> {
  if (s.match) {
    const linked = await linkItem(tx, {
      entryKey: w.job.entryKey,
      matchedKey: s.match.matchedKey,
      stage: s.match.stage,
      score: s.match.score,
      threshold: s.match.threshold,
      settingsRevision: revision,
      itemVersion: w.job.version,
      evidence: s.match.evidence,
      decidedBy: s.match.decidedBy,
    });
    // Matched inside its own cluster, whose canonical it is: it stays the canonical.
    if (linked.canonicalKey === w.job.entryKey) {
      return { outcome: "unique", stage: null, verdict: "survived" };
    }
    return { outcome: "duplicate", stage: s.match.stage, verdict: "dropped" };
  }
  // No match any more: an edited member leaves its cluster; an edited canonical hands it over
  // (clusters.ts elects the earliest live member, or dissolves a cluster left with one).
  if (w.stored?.clusterId != null) await unlinkItem(tx, w.job.entryKey, "edited");
  // Every grey pair goes to the review queue (one row per pair; a pair decided already stays).
  for (const g of s.greys) {
    reviews.push({
      entryKey: w.job.entryKey,
      candidateKey: g.candidate.entryKey,
      stage: "near",
      score: g.judgement.score,
      threshold: g.judgement.threshold,
      itemVersion: w.job.version,
      evidence: { hamming: g.judgement.hamming, ...g.judgement.evidence },
    });
  }
  if (s.greys.length > 0) return { outcome: "review", stage: "near", verdict: "survived" };
  return { outcome: "unique", stage: null, verdict: "survived" };
}

async function readItems(db: Database, entryKeys: string[]): Promise<Map<string, NewsItem>> {
  const rows = await db.prisma.$queryRaw<
    {
      entry_key: string;
      source_id: string;
      title: string | null;
      summary: string | null;
      link: string | null;
      version: number;
      first_seen_at: Date;
      deleted_at: Date | null;
    }[]
  >`
    SELECT entry_key, source_id, title, summary, link, version, first_seen_at, deleted_at
    FROM news WHERE entry_key = ANY(${entryKeys}::text[])`;
  return new Map(
    rows.map((row) => [
      row.entry_key,
      {
        entryKey: row.entry_key,
        sourceId: row.source_id,
        title: row.title,
        summary: row.summary,
        link: row.link,
        version: Number(row.version),
        firstSeenAt: row.first_seen_at,
        deletedAt: row.deleted_at,
      },
    ]),
  );
}

/** The keys and anchors each item was last decided with (absent: never keyed). */
async function storedKeysAll(
  db: Database,
  entryKeys: string[],
): Promise<Map<string, { keys: ItemKeys; anchors: number[] }>> {
  const rows = await db.prisma.$queryRaw<
    {
      entry_key: string;
      url_key: string | null;
      content_key: string | null;
      simhash: bigint | null;
      band0: number | null;
      band1: number | null;
      band2: number | null;
      band3: number | null;
      anchors: number[] | null;
    }[]
  >`
    SELECT entry_key, url_key, content_key, simhash, band0, band1, band2, band3,
           (SELECT array_agg(a.anchor) FROM dedup_anchors a WHERE a.entry_key = d.entry_key) AS anchors
    FROM dedup_items d WHERE d.entry_key = ANY(${entryKeys}::text[])`;
  const out = new Map<string, { keys: ItemKeys; anchors: number[] }>();
  for (const row of rows) {
    const banded =
      row.band0 !== null && row.band1 !== null && row.band2 !== null && row.band3 !== null;
    out.set(row.entry_key, {
      keys: {
        urlKey: row.url_key,
        contentKey: row.content_key,
        simhash: row.simhash === null ? null : fromSigned64(row.simhash),
        bands: banded
          ? [row.band0 as number, row.band1 as number, row.band2 as number, row.band3 as number]
          : null,
      },
      anchors: row.anchors ?? [],
    });
  }
  return out;
}
