import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { parseCalibration } from "@/lib/meaning/calibrations";
import { judgeMsrp, pairAuc, recall } from "./meaning";
import { handWrittenSets, parsePairsTsv, simulatorSets } from "./meaningPairs";

const run = promisify(execFile);
const MSRP_TRAIN = path.resolve(
  import.meta.dirname,
  "../../shared/corpora/msrp/msr_paraphrase_train.txt",
);
const BENGALI = /\p{Script=Bengali}/u;

describe("bench meaning: the pairs", () => {
  it("generates the simulator's pairs from a seed: the same seed, the same pairs", () => {
    const [bnBn, bnEn] = simulatorSets(7, 50);
    expect(bnBn?.pairs).toHaveLength(50);
    expect(bnEn?.pairs).toHaveLength(50);
    expect(simulatorSets(7, 50)).toEqual([bnBn, bnEn]);
    expect(simulatorSets(8, 50)[0]?.pairs).not.toEqual(bnBn?.pairs);
    for (const p of bnBn?.pairs ?? []) {
      expect(p.query).toMatch(BENGALI);
      expect(p.target).toMatch(BENGALI);
      expect(p.target).not.toBe(p.query);
    }
    for (const p of bnEn?.pairs ?? []) expect(p.target).not.toMatch(BENGALI);
    // One query per story: two equal queries would make one of them a miss by construction.
    expect(new Set(bnBn?.pairs.map((p) => p.query)).size).toBe(50);
  });

  it("reads the hand-written pairs: Bangla queries, Bangla or English targets", () => {
    const [bnBn, bnEn] = handWrittenSets();
    expect(bnBn?.pairs.length).toBeGreaterThanOrEqual(30);
    expect(bnEn?.pairs.length).toBeGreaterThanOrEqual(30);
    for (const p of bnBn?.pairs ?? []) expect(p.target).toMatch(BENGALI);
    for (const p of bnEn?.pairs ?? []) {
      expect(p.query).toMatch(BENGALI);
      expect(p.target).not.toMatch(BENGALI);
    }
  });

  it("refuses a pairs line that is not QUERY<TAB>TARGET, naming the line", () => {
    expect(parsePairsTsv("# a comment\n\na\tb\n")).toEqual([{ query: "a", target: "b" }]);
    expect(() => parsePairsTsv("a\tb\nonly one\n", "x.tsv")).toThrow(/x.tsv line 2/);
    expect(() => parsePairsTsv("a\t \n")).toThrow(/line 1/);
  });
});

describe("bench meaning: the measures", () => {
  const v = (...xs: number[]) => Float32Array.from(xs);

  it("recall@k counts a target scoring as high as the own one against the query", () => {
    const vectors: Record<string, Float32Array> = {
      q1: v(1, 0),
      t1: v(1, 0),
      q2: v(0, 1),
      t2: v(0.6, 0.8),
      // Scores 1 for q1 too: a tie with t1, which must count against q1.
      t3: v(1, 0),
      q3: v(0.8, 0.6),
    };
    const pairs = [
      { query: "q1", target: "t1" },
      { query: "q2", target: "t2" },
      { query: "q3", target: "t3" },
    ];
    const r = recall(pairs, (t) => vectors[t] as Float32Array);
    // q1: t3 ties → rank 2. q2: t2 (0.8) beats t1, t3 (0) → 1. q3: t2 (0.96), t1 (0.8, a tie) → 3.
    expect(r).toEqual({ pairs: 3, recallAt1: 1 / 3, recallAt10: 1 });
  });

  it("pair AUC: 1 when the score orders the labels, 0.5 for ties, and the best cut's accuracy", () => {
    const rows = [
      { score: 0.9, label: true },
      { score: 0.8, label: true },
      { score: 0.3, label: false },
      { score: 0.1, label: false },
    ];
    expect(pairAuc(rows)).toEqual({ auc: 1, bestAccuracy: 1 });
    expect(pairAuc(rows.map((r) => ({ ...r, score: 0.5 }))).auc).toBe(0.5);
    expect(pairAuc([...rows, { score: 0.95, label: false }]).bestAccuracy).toBeCloseTo(4 / 5);
  });

  it("judges MSRP pairs with the shipped stages 1-3, marking the grey band and its guards", () => {
    const grey = judgeMsrp({
      label: false,
      a: "America Online last quarter lost 846,000 dial-up subscribers.",
      b: "No wonder AOL lost 846,000 subscribers last quarter.",
    });
    expect(grey).toMatchObject({ grey: true, duplicate: false, guard: null });
    expect(grey.near).toBeGreaterThanOrEqual(0.4);
    const linked = judgeMsrp({ label: true, a: "Fed raises rates", b: "Fed raises rates." });
    expect(linked).toMatchObject({ grey: false, duplicate: true });
  });
});

// Keeps the benchmark runnable and its --json line a contract; the figures are for people.
describe("npm run -s bench -- meaning --json", () => {
  it("prints one JSON line: the sets, and per model retrieval, AUC and the calibration", async () => {
    const { stdout } = await run(
      "npm",
      [
        "run",
        "-s",
        "bench",
        "--",
        "meaning",
        "--models",
        "lexical",
        "--limit",
        "300",
        "--sim-count",
        "40",
        "--folds",
        "3",
        "--test-file",
        MSRP_TRAIN,
        "--json",
      ],
      { env: { ...process.env, LOG_LEVEL: "silent" } },
    );
    const lines = stdout.trim().split("\n");
    expect(lines).toHaveLength(1);
    const result = JSON.parse(lines[0] as string);
    expect(Object.keys(result).sort()).toEqual(["models", "msrp", "sets"]);
    // The training file stands in for MSRP's test part here (the test part is not on this machine).
    expect(result.msrp).toMatchObject({ pairs: 300, folds: 3, seed: 13, test: 4076 });
    expect(result.sets.map((s: { name: string }) => s.name)).toEqual([
      "msrp",
      "sim-bn-bn",
      "sim-bn-en",
      "hand-bn-bn",
      "hand-bn-en",
    ]);
    const [lexical] = result.models;
    expect(lexical.model).toBe("lexical:char3-hash-512@1");
    expect(lexical.calibration).toBeNull();
    for (const name of ["msrp", "sim-bn-bn", "hand-bn-en"]) {
      const r = lexical.retrieval[name];
      expect(r.recallAt10).toBeGreaterThanOrEqual(r.recallAt1);
      expect(r.recallAt1).toBeGreaterThanOrEqual(0);
    }
    expect(lexical.auc.all.auc).toBeGreaterThan(0.5);
    expect(lexical.folds).toHaveLength(3);
    // The lexical fallback gives no stage-4 verdict: on and off are the same pairs predicted.
    expect(lexical.test.pairs).toBe(4076);
    expect(lexical.test.on).toEqual(lexical.test.off);
  });

  it("writes the shipped model's calibration as a file dedup-pairs reads", async () => {
    const file = path.join(mkdtempSync(path.join(tmpdir(), "bench-meaning-")), "c.json");
    await run(
      "npm",
      [
        "run",
        "-s",
        "bench",
        "--",
        "meaning",
        "--models",
        "shipped",
        "--limit",
        "60",
        "--sim-count",
        "10",
        "--folds",
        "2",
        "--json",
        "--write-calibration",
        file,
      ],
      { env: { ...process.env, LOG_LEVEL: "silent" } },
    );
    const c = parseCalibration(readFileSync(file, "utf8"), file);
    expect(c.model).toBe("shipped:use-lite@0.2.0");
    expect(c.languages).toEqual(["en"]);
    expect(c.record.pairs).toBe(60);
    expect(c.record.crossValidation.folds).toBe(2);
  });
});
