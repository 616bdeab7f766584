/**
 * lib/dedup: the dedup cascade's pure part (no database). The live stage (workers/dedup) and the
 * `dedup-pairs` CLI both judge pairs through `judge`, so a pair is decided the same way in both.
 */
export {
  anchorOf,
  anchorRetrievable,
  anchorStem,
  anchors,
  DEFAULT_ANCHORS,
  sharedAnchors,
} from "./anchors";
export { digest128 } from "./hash";
export {
  contentKey,
  type DedupItem,
  type DedupStage,
  type ItemKeys,
  itemKeys,
  itemText,
  type JudgeInput,
  type Judgement,
  judge,
  type Retrieval,
  retrievable,
  retrievedBy,
} from "./judge";
export { normalizeText, words } from "./normalize";
export { judgeTitles, type PairVerdict } from "./pair";
export {
  type Analyzed,
  analyze,
  blend,
  EVIDENCE_LIMIT,
  type Evidence,
  evidence,
  type PairFeatures,
  pairFeatures,
  pairScore,
  SCORE_WEIGHTS,
  type ScoreWeights,
} from "./score";
export { type Shingles, shingles } from "./shingles";
export {
  type Bands,
  bandProbes,
  bands,
  fromSigned64,
  hamming,
  retrievableAt,
  simhash64,
  simhashOf,
  simhashOfShingles,
  toSigned64,
} from "./simhash";
export { DEFAULT_THRESHOLDS, type DedupThresholds, dedupThresholdsSchema } from "./thresholds";
export { urlKey } from "./urlKey";
