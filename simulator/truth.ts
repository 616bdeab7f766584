import type { Newsroom } from "./newsroom";
import { FEED_SUFFIX, type Language, type Outlet } from "./outlets";
import { servedIdentity } from "./render/feeds";
import type { RepublishKind } from "./republish";

/**
 * One item as a wirewatch source carries it, with the answer key: which story it tells and how
 * it was made. An outlet with two feeds gives two items (two rows in `news`, the same story).
 * `guid` and `link` are what the source serves, so `canonicalId({ guid, link })` and
 * `entryKey(sourceId, …)` from lib/canonical name the row the writer makes of it.
 */
export interface TruthItem {
  sourceId: string;
  outlet: string;
  /** The outlet's story number (`/o/<outlet>/<number>`). */
  number: number;
  guid: string | null;
  link: string;
  /** Shared by every copy of the same news: the dedup answer key. */
  storyId: string;
  how: RepublishKind;
  /** The outlet's story this item was made from; null for an original. */
  copyOf: { outlet: string; number: number } | null;
  language: Language;
  title: string;
  publishedAt: string;
  /** 1 as first published; an edit or the retraction adds one. */
  revision: number;
  retracted: boolean;
}

export interface Truth {
  now: string;
  items: TruthItem[];
  /** Items per kind, and stories told by more than one item. */
  counts: Partial<Record<RepublishKind, number>> & { items: number; sharedStories: number };
}

/** Everything published so far, as each listed source carries it. */
export function truth(newsroom: Newsroom, outlets: readonly Outlet[], now: number): Truth {
  const items: TruthItem[] = [];
  for (const outlet of outlets) {
    for (const s of newsroom.stories(outlet.id)) {
      if (s.publishedAt > now) continue;
      const identities: { sourceId: string; guid: string | null; link: string }[] = [];
      // A stream outlet's page observations are written under the stream's source id.
      if (outlet.stream) identities.push({ sourceId: outlet.id, guid: s.guid, link: s.link });
      for (const format of outlet.feeds) {
        identities.push({
          sourceId: `${outlet.id}-${FEED_SUFFIX[format]}`,
          ...servedIdentity(format, s),
        });
      }
      for (const id of identities) {
        items.push({
          ...id,
          outlet: outlet.id,
          number: s.number,
          storyId: s.storyKey,
          how: s.how,
          copyOf: s.copyOf ? { ...s.copyOf } : null,
          language: s.language,
          title: s.title,
          publishedAt: new Date(s.publishedAt).toISOString(),
          revision: s.revision,
          retracted: s.retractedAt !== null,
        });
      }
    }
  }
  const counts: Truth["counts"] = { items: items.length, sharedStories: 0 };
  const perStory = new Map<string, number>();
  for (const item of items) {
    counts[item.how] = (counts[item.how] ?? 0) + 1;
    perStory.set(item.storyId, (perStory.get(item.storyId) ?? 0) + 1);
  }
  counts.sharedStories = [...perStory.values()].filter((n) => n > 1).length;
  return { now: new Date(now).toISOString(), items, counts };
}

export interface PairScores {
  /** Pairs put in one cluster that tell the same story, over all pairs put in one cluster. */
  precision: number;
  /** Pairs that tell the same story put in one cluster, over all such pairs. */
  recall: number;
  predictedPairs: number;
  truePairs: number;
  correctPairs: number;
}

const pairs = (n: number) => (n * (n - 1)) / 2;

/**
 * Pairwise precision and recall of "same cluster" against "same story", over the items given:
 * `story[i]` is item i's story, `cluster[i]` its cluster (null: alone). Counted through the
 * contingency of (cluster, story), so 100,000 items cost a map, not 5·10⁹ pairs. With no pair
 * predicted, precision is 1 (nothing wrong was claimed); with no true pair, recall is 1.
 */
export function pairScores(
  story: readonly string[],
  cluster: readonly (string | null)[],
): PairScores {
  if (story.length !== cluster.length) throw new Error("story and cluster lists differ in length");
  const byStory = new Map<string, number>();
  const byCluster = new Map<string, number>();
  const byBoth = new Map<string, number>();
  for (let i = 0; i < story.length; i++) {
    const s = story[i] as string;
    byStory.set(s, (byStory.get(s) ?? 0) + 1);
    const c = cluster[i];
    if (c === null || c === undefined) continue;
    byCluster.set(c, (byCluster.get(c) ?? 0) + 1);
    const both = JSON.stringify([c, s]);
    byBoth.set(both, (byBoth.get(both) ?? 0) + 1);
  }
  const sum = (m: Map<string, number>) => [...m.values()].reduce((t, n) => t + pairs(n), 0);
  const truePairs = sum(byStory);
  const predictedPairs = sum(byCluster);
  const correctPairs = sum(byBoth);
  return {
    precision: predictedPairs === 0 ? 1 : correctPairs / predictedPairs,
    recall: truePairs === 0 ? 1 : correctPairs / truePairs,
    predictedPairs,
    truePairs,
    correctPairs,
  };
}

/**
 * Per kind of copy: of the items made that way whose original is among `items`, the share put in
 * the same cluster as it (the link a dedup stage had to find). Originals are not counted.
 */
export function linkedShare(
  items: readonly TruthItem[],
  cluster: readonly (string | null)[],
): Partial<Record<RepublishKind, { linked: number; of: number }>> {
  const clustersOf = new Map<string, Set<string | null>>();
  items.forEach((item, i) => {
    const key = `${item.outlet}/${item.number}`;
    const set = clustersOf.get(key) ?? new Set();
    set.add(cluster[i] ?? null);
    clustersOf.set(key, set);
  });
  const out: Partial<Record<RepublishKind, { linked: number; of: number }>> = {};
  items.forEach((item, i) => {
    if (!item.copyOf) return;
    const source = clustersOf.get(`${item.copyOf.outlet}/${item.copyOf.number}`);
    if (!source) return;
    const c = cluster[i] ?? null;
    const row = out[item.how] ?? { linked: 0, of: 0 };
    row.of += 1;
    if (c !== null && source.has(c)) row.linked += 1;
    out[item.how] = row;
  });
  return out;
}
