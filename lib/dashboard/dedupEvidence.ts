// Reading the evidence lib/dedup records with a link or a review (jsonb), for the server's
// reads and the page's components alike: pure, no database.

export const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

export const pick = (o: Record<string, unknown>, names: string[]): unknown => {
  for (const n of names) if (n in o) return o[n];
  return undefined;
};

/**
 * Why two texts were judged alike, as lib/dedup's evidence() records it. The stage's shape is
 * read leniently (the record is jsonb written by another module and kept for years): known
 * keys are picked out, and the whole record is kept for the page's "raw" view.
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

const strings = (v: unknown): string[] =>
  Array.isArray(v) ? v.filter((x): x is string => typeof x === "string").slice(0, 200) : [];

export function readEvidence(raw: unknown): Evidence | null {
  if (!isRecord(raw)) return null;
  const distance = pick(raw, ["hamming", "distance"]);
  return {
    shared: strings(pick(raw, ["shared", "sharedWords", "common"])),
    phrases: strings(pick(raw, ["sharedPhrases", "sharedShingles"])),
    onlyHere: strings(pick(raw, ["onlyA", "onlyInA", "differingA", "removed", "onlyHere"])),
    onlyThere: strings(pick(raw, ["onlyB", "onlyInB", "differingB", "added", "onlyThere"])),
    distance: typeof distance === "number" ? distance : null,
    urlKey: typeof raw.urlKey === "string" ? raw.urlKey : null,
    contentKey: typeof raw.contentKey === "string" ? raw.contentKey : null,
    raw,
  };
}
