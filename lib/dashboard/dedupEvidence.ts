// Reading the evidence lib/dedup records with a link or a review (jsonb), for the server's
// reads and the page's components alike: pure, no database.

export const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * Why two texts were judged alike, as the stage records it with a link or a review (jsonb):
 * lib/dedup's evidence() (shared words and phrases, the words only on each side) and the SimHash
 * distance for the scored stages, the matched key for the index stages. Read defensively (the
 * record outlives the code that wrote it): anything missing or of the wrong type is empty, and
 * the whole record is kept for a raw view.
 */
export interface Evidence {
  /** Words both texts have, and word pairs (phrases) both have. */
  shared: string[];
  phrases: string[];
  /** Words only in this item's text, and only in the text it matched. */
  onlyHere: string[];
  onlyThere: string[];
  /** Hamming distance of the SimHashes, when the stage recorded one. */
  distance: number | null;
  /** The key an index stage matched on: the normalised URL, or the text's fingerprint. */
  urlKey: string | null;
  contentKey: string | null;
  raw: unknown;
}

/** Words shown per list: lib/dedup keeps its own lists short; a hand-made row is cut here. */
const WORDS_SHOWN = 200;

const strings = (v: unknown): string[] =>
  Array.isArray(v) ? v.filter((x): x is string => typeof x === "string").slice(0, WORDS_SHOWN) : [];

const text = (v: unknown): string | null => (typeof v === "string" ? v : null);

export function readEvidence(raw: unknown): Evidence | null {
  if (!isRecord(raw)) return null;
  return {
    shared: strings(raw.shared),
    phrases: strings(raw.sharedPhrases),
    onlyHere: strings(raw.onlyA),
    onlyThere: strings(raw.onlyB),
    distance: typeof raw.hamming === "number" ? raw.hamming : null,
    urlKey: text(raw.urlKey),
    contentKey: text(raw.contentKey),
    raw,
  };
}
