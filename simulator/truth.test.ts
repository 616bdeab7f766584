import { describe, expect, it } from "vitest";
import { linkedShare, pairScores, type TruthItem } from "./truth";

describe("pairScores", () => {
  it("counts pairs through the contingency table, as brute force would", () => {
    // Stories: a a a b b c; clusters: X X Y Y Y alone.
    const story = ["a", "a", "a", "b", "b", "c"];
    const cluster = ["X", "X", "Y", "Y", "Y", null];
    // True pairs: a:3, b:1 → 4. Predicted: X:1, Y:3 → 4. Correct: (X,a):1, (Y,b):1 → 2.
    expect(pairScores(story, cluster)).toEqual({
      precision: 0.5,
      recall: 0.5,
      predictedPairs: 4,
      truePairs: 4,
      correctPairs: 2,
    });
    let brute = { predicted: 0, truth: 0, correct: 0 };
    for (let i = 0; i < story.length; i++) {
      for (let j = i + 1; j < story.length; j++) {
        const same = cluster[i] !== null && cluster[i] === cluster[j];
        const real = story[i] === story[j];
        brute = {
          predicted: brute.predicted + Number(same),
          truth: brute.truth + Number(real),
          correct: brute.correct + Number(same && real),
        };
      }
    }
    expect(brute).toEqual({ predicted: 4, truth: 4, correct: 2 });
  });

  it("a cluster name that looks like a story id does not collide with it", () => {
    // Keys joined naively ("a|b") would merge ("a|b", "c") with ("a", "b|c").
    expect(pairScores(["b|c", "c"], ["a", "a|b"]).predictedPairs).toBe(0);
    expect(pairScores(["c", "b|c"], ["a|b", "a"]).correctPairs).toBe(0);
  });

  it("nothing claimed is precision 1; nothing to find is recall 1; lists must match", () => {
    expect(pairScores(["a", "a"], [null, null])).toMatchObject({ precision: 1, recall: 0 });
    expect(pairScores(["a", "b"], ["X", "X"])).toMatchObject({ precision: 0, recall: 1 });
    expect(pairScores([], [])).toMatchObject({ precision: 1, recall: 1 });
    expect(() => pairScores(["a"], [])).toThrow(/differ in length/);
  });
});

describe("linkedShare", () => {
  const item = (over: Partial<TruthItem>): TruthItem => ({
    sourceId: "x",
    outlet: "wire",
    number: 1,
    guid: null,
    link: "http://sim/1",
    storyId: "s1",
    how: "original",
    copyOf: null,
    language: "en",
    title: "t",
    publishedAt: "2026-06-12T09:00:00.000Z",
    revision: 1,
    retracted: false,
    ...over,
  });

  it("a copy counts as linked when it shares a cluster with any row of its original", () => {
    const items = [
      item({ sourceId: "harbour-rss", outlet: "harbour", number: 4 }),
      item({ sourceId: "harbour-atom", outlet: "harbour", number: 4 }),
      item({ outlet: "meridian", how: "wire-copy", copyOf: { outlet: "harbour", number: 4 } }),
      item({ outlet: "digest", how: "amp", copyOf: { outlet: "harbour", number: 4 } }),
      item({ outlet: "digest", number: 2, how: "amp", copyOf: { outlet: "gone", number: 9 } }),
    ];
    expect(linkedShare(items, [null, "C", "C", null, "C"])).toEqual({
      "wire-copy": { linked: 1, of: 1 },
      // Its original is not among the items: not counted at all.
      amp: { linked: 0, of: 1 },
    });
  });
});
