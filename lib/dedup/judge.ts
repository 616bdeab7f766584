import { anchorRetrievable, anchors, sharedAnchors } from "./anchors";
import { digest128 } from "./hash";
import { normalizeText, words } from "./normalize";
import { opposed } from "./polarity";
import { type Analyzed, analyze, type Evidence, evidence, pairScore } from "./score";
import { type Bands, bands, hamming, retrievableAt, simhashOfShingles } from "./simhash";
import { swapped } from "./swaps";
import type { DedupThresholds } from "./thresholds";
import { urlKey } from "./urlKey";

export interface DedupItem {
  title: string | null | undefined;
  summary?: string | null;
  link?: string | null;
}

/** What the stage stores per item (dedup_items) to find it again with an index lookup. */
export interface ItemKeys {
  urlKey: string | null;
  /** Null when the item has no text (no title and no summary): nothing to compare. */
  contentKey: string | null;
  simhash: bigint | null;
  bands: Bands | null;
}

/** The text the content stages read: title and summary, as one. */
export function itemText(item: DedupItem): string {
  return [item.title, item.summary].filter((s): s is string => typeof s === "string").join(" \n ");
}

/**
 * The exact stage's fingerprint: of the normalised text's words joined by one space, hex; null
 * for a text with no word left after normalising. itemKeys computes the same from its analysis.
 */
export function contentKey(text: string): string | null {
  const ws = words(normalizeText(text));
  return ws.length ? digest128(ws.join(" ")) : null;
}

function hasContent(a: Analyzed): boolean {
  for (const k of a.shingles.keys()) if (k.startsWith("c:")) return true;
  return false;
}

export function itemKeys(item: DedupItem, analyzed: Analyzed = analyze(itemText(item))): ItemKeys {
  const key = urlKey(item.link);
  if (analyzed.words.length === 0)
    return { urlKey: key, contentKey: null, simhash: null, bands: null };
  const content = digest128(analyzed.words.join(" "));
  // Stop words only ("What is it?"): equal texts still meet as exact, but there is nothing for
  // a near match to go on, and every such text would share SimHash 0.
  if (!hasContent(analyzed))
    return { urlKey: key, contentKey: content, simhash: null, bands: null };
  const simhash = simhashOfShingles(analyzed.shingles);
  return { urlKey: key, contentKey: content, simhash, bands: bands(simhash) };
}

/** Whether the live stage's banded lookup for a finds b (the SimHash half of the rule). */
export function retrievable(a: bigint, b: bigint, thresholds: DedupThresholds): boolean {
  return retrievableAt(a, b, thresholds.retrieval.radius);
}

/** How stage 3 found a pair: by the SimHash bands, by shared anchors, or not at all. */
export type Retrieval = "bands" | "anchors" | null;

/**
 * Stage 3's one retrieval rule, which the live lookups (workers/dedup/lookup.ts nearCandidates,
 * workers/dedup/anchors.ts anchorCandidates) apply in SQL and `judge` applies here: a band within
 * `radius` bits and within `maxHamming`, or at least `minShared` shared anchors (whatever the
 * Hamming distance: a rewrite's SimHash is 14-16 bits away, the anchors are what it kept).
 */
export function retrievedBy(
  a: { simhash: bigint; anchors: readonly number[] },
  b: { simhash: bigint; anchors: readonly number[] },
  thresholds: DedupThresholds,
): Retrieval {
  const r = thresholds.retrieval;
  if (
    retrievable(a.simhash, b.simhash, thresholds) &&
    hamming(a.simhash, b.simhash) <= r.maxHamming
  )
    return "bands";
  if (r.anchors > 0 && anchorRetrievable(a.anchors, b.anchors, r.minShared)) return "anchors";
  return null;
}

export type DedupStage = "url" | "exact" | "near" | "review";

export interface Judgement {
  duplicate: boolean;
  /** Which stage settled the pair; "review": the grey band, not linked; null: not duplicates. */
  stage: DedupStage | null;
  /** 1 for url and exact; the pair score otherwise (0 when a side has no text). */
  score: number;
  /** The threshold the score was held against (1 for url and exact). */
  threshold: number;
  /** SimHash Hamming distance, when both sides have text. */
  hamming?: number;
  /** Which lookup of stage 3 finds the pair (bands, anchors, or null: neither), when both have text. */
  retrieval?: Retrieval;
  /** Anchors the two share, when both have text. */
  sharedAnchors?: number;
  /** Shared and differing words, for near and review. */
  evidence?: Evidence;
}

/**
 * An item, optionally with what was already computed for it (the stage reuses them). `anchors`
 * must have been computed with the same `retrieval.anchors` as the thresholds judged with.
 */
export type JudgeInput = DedupItem & { keys?: ItemKeys; analyzed?: Analyzed; anchors?: number[] };

function prepared(x: JudgeInput): { keys: ItemKeys; analyzed: Analyzed } {
  const analyzed = x.analyzed ?? analyze(itemText(x));
  return { analyzed, keys: x.keys ?? itemKeys(x, analyzed) };
}

/**
 * The cascade for one pair, in order of cost: equal urlKey → "url"; equal contentKey →
 * "exact"; found by stage 3's retrieval (retrievedBy: a band within radius and maxHamming, or
 * minShared anchors) and scoring ≥ near.duplicate →
 * "near"; scoring in [near.review, near.duplicate) → "review" (not linked: the meaning stage or
 * an operator decides); anything else → null. The live stage and `dedup-pairs` both decide here.
 */
export function judge(a: JudgeInput, b: JudgeInput, thresholds: DedupThresholds): Judgement {
  const A = prepared(a);
  const B = prepared(b);
  if (A.keys.urlKey !== null && A.keys.urlKey === B.keys.urlKey) {
    return { duplicate: true, stage: "url", score: 1, threshold: 1 };
  }
  if (A.keys.contentKey !== null && A.keys.contentKey === B.keys.contentKey) {
    return { duplicate: true, stage: "exact", score: 1, threshold: 1 };
  }
  const threshold = thresholds.near.duplicate;
  if (A.keys.simhash === null || B.keys.simhash === null) {
    return { duplicate: false, stage: null, score: 0, threshold };
  }
  const distance = hamming(A.keys.simhash, B.keys.simhash);
  const score = pairScore(A.analyzed, B.analyzed);
  const count = thresholds.retrieval.anchors;
  const anchorsA = a.anchors ?? anchors(A.analyzed, count);
  const anchorsB = b.anchors ?? anchors(B.analyzed, count);
  const retrieval = retrievedBy(
    { simhash: A.keys.simhash, anchors: anchorsA },
    { simhash: B.keys.simhash, anchors: anchorsB },
    thresholds,
  );
  const found = retrieval !== null;
  const base = {
    score,
    threshold,
    hamming: distance,
    retrieval,
    sharedAnchors: sharedAnchors(anchorsA, anchorsB),
  };
  // Opposite outcomes ("rise" / "fall") are never linked on words alone: the pair goes to
  // review, where meaning or an operator decides (lib/dedup/polarity.ts).
  const conflict = found ? opposed(A.analyzed.words, B.analyzed.words) : null;
  // One frame, other particulars ("26 villages in Madaripur" / "49 villages in Barguna"): held
  // back to review the same way (lib/dedup/swaps.ts).
  const swap =
    found && conflict === null && score >= thresholds.near.review
      ? swapped(A.analyzed.words, B.analyzed.words)
      : null;
  if (found && score >= thresholds.near.duplicate && conflict === null && swap === null) {
    return { ...base, duplicate: true, stage: "near", evidence: evidence(A.analyzed, B.analyzed) };
  }
  if (found && score >= thresholds.near.review) {
    return {
      ...base,
      duplicate: false,
      stage: "review",
      evidence: {
        ...evidence(A.analyzed, B.analyzed),
        ...(conflict ? { opposed: conflict } : {}),
        ...(swap ? { swapped: swap } : {}),
      },
    };
  }
  return { ...base, duplicate: false, stage: null };
}
