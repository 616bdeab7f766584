/**
 * The read model's ranking (issue 16): computed once per model version by the builder and frozen
 * in the version's `order:` payloads, so pages never shift under a reader and no request ranks.
 *
 *   score = 0.5^(age_h / halfLife) × (1 + outletWeight × log2(outlets)) × (breaking ? boost : 1)
 *
 * age_h: hours from the story's first sighting to the build. Ties: first seen, newest first; then
 * the id, so two builds over the same stories at the same instant give the same order.
 *
 * The defaults (lib/config.ts WIREWATCH_RANK_*), and why:
 * - halfLife 6 h: a news day's front page turns over in about a shift; at 6 h a story from this
 *   morning (age 6 h) weighs half a fresh one, yesterday's (24 h) a sixteenth: a story a day old
 *   needs 16× the coverage factor to match a fresh lone one, which no outlet count gives (2^30),
 *   so yesterday leaves the top of the list on its own.
 * - outletWeight 0.5 over log2: every doubling of the outlets covering a story adds half of a
 *   lone story's score (2 outlets ×1.5, 4 ×2, 16 ×3); the log keeps one story that every outlet
 *   carries from burying the rest, and at 6 h half-life, 4 outlets buy a story 6 h of freshness.
 * - boost 2: a breaking flag is worth one half-life (6 h) of age, enough to lead the list for
 *   the hours it matters and not for the day.
 */
export interface RankWeights {
  halfLifeHours: number;
  outletWeight: number;
  breakingBoost: number;
}

export const DEFAULT_RANK_WEIGHTS: RankWeights = {
  halfLifeHours: 6,
  outletWeight: 0.5,
  breakingBoost: 2,
};

/** What a story's score is made of. */
export interface Rankable {
  id: string;
  firstSeenAt: Date;
  outlets: number;
  breaking: boolean;
}

const HOUR_MS = 3_600_000;

export function score(story: Rankable, now: Date, weights: RankWeights): number {
  // A story first seen "after" the build (clock skew between hosts) counts as fresh, not as
  // more than fresh.
  const ageHours = Math.max(0, now.getTime() - story.firstSeenAt.getTime()) / HOUR_MS;
  const recency = 0.5 ** (ageHours / weights.halfLifeHours);
  const coverage = 1 + weights.outletWeight * Math.log2(Math.max(1, story.outlets));
  return recency * coverage * (story.breaking ? weights.breakingBoost : 1);
}

/** The stories' ids in rank order at `now`: the frozen order of one model version. */
export function rank<T extends Rankable>(
  stories: readonly T[],
  now: Date,
  weights: RankWeights,
): T[] {
  const scored = stories.map((s) => ({ s, score: score(s, now, weights) }));
  scored.sort(
    (a, b) =>
      b.score - a.score ||
      b.s.firstSeenAt.getTime() - a.s.firstSeenAt.getTime() ||
      (a.s.id < b.s.id ? -1 : a.s.id > b.s.id ? 1 : 0),
  );
  return scored.map((x) => x.s);
}
