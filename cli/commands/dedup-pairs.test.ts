import { spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { judgeTitles } from "@/lib/dedup";
import { SHIPPED_MODEL } from "@/lib/embed";
import { calibrationFor, type MeaningCalibration } from "@/lib/meaning/calibrations";

const ROOT = path.resolve(import.meta.dirname, "../..");

function cli(input: string, args: string[] = [], env: Record<string, string> = {}) {
  const r = spawnSync("npm", ["run", "-s", "cli", "--", "dedup-pairs", ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    input,
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024,
  });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

describe("cli dedup-pairs", () => {
  it("prints exactly one JSON line per pair, in the contract's key order", () => {
    const input = [
      "Fed raises interest rates by a quarter point to fight inflation\tUPDATE 2-Fed raises interest rates by a quarter point to fight inflation",
      "ঢাকায় ১২ জন নিহত\tঢাকায় 12 জন নিহত।",
      "Apple unveils new iPhone at California event\tApple shares fall after California court ruling",
      "\t",
      "সিলেটে বন্যায় লাখো মানুষ পানিবন্দী\tসিলেটের বন্যায় লাখো মানুষ পানিবন্দী\r",
    ].join("\n");
    const { code, out, err } = cli(`${input}\n`);
    expect(err).toBe("");
    expect(code).toBe(0);
    expect(out).toBe(
      [
        '{"duplicate":true,"stage":"near","score":0.9074}',
        '{"duplicate":true,"stage":"exact","score":1}',
        '{"duplicate":false,"stage":null,"score":0.3195}',
        '{"duplicate":false,"stage":null,"score":0}',
        '{"duplicate":true,"stage":"near","score":0.9942}',
        "",
      ].join("\n"),
    );
  });

  it("judges as lib/dedup's judgeTitles does (the live stage's rule, no URL)", () => {
    const pairs = [
      [
        "Magnitude 6.1 earthquake strikes off Japan",
        "Earthquake of magnitude 6.1 strikes off Japan coast",
      ],
      ["Fed raises rates by quarter point", "Fed raises interest rates by a quarter point"],
    ];
    const { out } = cli(pairs.map((p) => p.join("\t")).join("\n"));
    expect(
      out
        .trimEnd()
        .split("\n")
        .map((l) => JSON.parse(l)),
    ).toEqual(pairs.map(([a, b]) => judgeTitles(a as string, b as string)));
  });

  it("answers a malformed line with null, names it on stderr, goes on, and exits 1", () => {
    const { code, out, err } = cli("no tab here\na\tb\tc\nsame\tsame\n\n");
    expect(out).toBe(
      ["null", "null", '{"duplicate":true,"stage":"exact","score":1}', "null", ""].join("\n"),
    );
    expect(err).toBe(
      [
        "dedup-pairs: line 1: no tab; expected TEXT_A<TAB>TEXT_B",
        "dedup-pairs: line 2: 2 tabs; expected TEXT_A<TAB>TEXT_B",
        "dedup-pairs: line 4: no tab; expected TEXT_A<TAB>TEXT_B",
        "",
      ].join("\n"),
    );
    expect(code).toBe(1);
  });

  it("prints nothing for empty input and handles a last line without newline", () => {
    expect(cli("")).toMatchObject({ code: 0, out: "", err: "" });
    expect(cli("x\tx")).toMatchObject({
      code: 0,
      out: '{"duplicate":true,"stage":"exact","score":1}\n',
    });
  });

  it("streams a large input through, one answer per line", () => {
    const lines = Array.from(
      { length: 20_000 },
      (_, i) => `story ${i} about floods\tstory ${i} about floods`,
    );
    const { code, out } = cli(`${lines.join("\n")}\n`);
    expect(code).toBe(0);
    const outLines = out.split("\n");
    expect(outLines).toHaveLength(20_001);
    expect(new Set(outLines.slice(0, -1))).toEqual(
      new Set(['{"duplicate":true,"stage":"exact","score":1}']),
    );
  });
});

// Pairs stages 1-3 leave in review (scores 0.40-0.49, no guard), with USE-lite's cosine: high,
// low, in between; and a Bangla one, which the English-only model must not judge.
const GREY = {
  high: [
    "Steverson said Williams was known as a racist who did not like Blacks.",
    "Steverson said Williams, who was white, was a racist.",
  ], // cosine 0.93
  low: [
    "The comment period was to have expired on Monday.",
    "A public comment period on the proposed new taxes will end on Monday.",
  ], // cosine 0.44
  middle: [
    "America Online last quarter lost 846,000 dial-up subscribers.",
    "No wonder AOL lost 846,000 subscribers last quarter.",
  ], // cosine 0.75
  bangla: ["চট্টগ্রামে পাহাড়ধসে তিনজনের মৃত্যু", "পাহাড় ধসে চট্টগ্রামে মারা গেছেন তিনজন"],
} as const;

/** A calibration file for the shipped model with thresholds an operator set (the shipped one has none). */
function calibrationFile(model = SHIPPED_MODEL.model): string {
  const shipped = calibrationFor(SHIPPED_MODEL.model) as MeaningCalibration;
  const file = path.join(mkdtempSync(path.join(tmpdir(), "dedup-pairs-")), "calibration.json");
  const c: MeaningCalibration = {
    ...shipped,
    model,
    rule: { cosineWeight: 1, meaningThreshold: 0.9, distinctThreshold: 0.6 },
  };
  writeFileSync(file, JSON.stringify(c));
  return file;
}

describe("cli dedup-pairs, stage 4", () => {
  it("the grey pairs are the ones stages 1-3 print as review", () => {
    for (const [a, b] of Object.values(GREY)) {
      expect(judgeTitles(a, b)).toMatchObject({ duplicate: false, stage: "review" });
    }
  });

  it("settles grey pairs by meaning with the model's calibration, leaves the rest as they were", () => {
    const near = "Fed raises rates by quarter point\tFed raises interest rates by a quarter point";
    const lines = [near, ...Object.values(GREY).map((p) => p.join("\t"))];
    const { code, out, err } = cli(`${lines.join("\n")}\n`, ["--calibration", calibrationFile()]);
    expect(code).toBe(0);
    const got = out
      .trimEnd()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(got).toHaveLength(5);
    expect(got[0]).toEqual(
      judgeTitles(
        "Fed raises rates by quarter point",
        "Fed raises interest rates by a quarter point",
      ),
    );
    expect(got[1]).toMatchObject({ duplicate: true, stage: "meaning" });
    expect(got[1].score).toBeGreaterThanOrEqual(0.9);
    expect(got[2]).toMatchObject({ duplicate: false, stage: "meaning" });
    expect(got[2].score).toBeLessThan(0.6);
    expect(got[3]).toEqual(judgeTitles(...GREY.middle));
    expect(got[4]).toEqual(judgeTitles(...GREY.bangla));
    // Keys in the contract's order, also for a meaning line.
    expect(Object.keys(got[1])).toEqual(["duplicate", "stage", "score"]);
    expect(err).toBe(
      `dedup-pairs: stage 4 leaves grey pairs in bn in review: ${SHIPPED_MODEL.model} reads en only\n`,
    );
  });

  it("with the shipped calibration (no verdict) prints grey pairs as review and says so once", () => {
    const input = `${[GREY.high, GREY.low, GREY.middle].map((p) => p.join("\t")).join("\n")}\n`;
    const { code, out, err } = cli(input);
    expect(code).toBe(0);
    expect(out).toBe(
      `${[GREY.high, GREY.low, GREY.middle].map(([a, b]) => JSON.stringify(judgeTitles(a, b))).join("\n")}\n`,
    );
    const lines = err.trimEnd().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /^dedup-pairs: stage 4 off: shipped:use-lite@0\.2\.0 gives no stage-4 verdict \(the score does not separate .*\); grey pairs print as review$/,
    );
  });

  it("with a configured model that does not load, prints as before and says so once", () => {
    const input = `${[GREY.high, GREY.low].map((p) => p.join("\t")).join("\n")}\n`;
    const missing = path.join(tmpdir(), "no-such-onnx-model");
    const { code, out, err } = cli(input, [], { WIREWATCH_EMBEDDING_MODEL: `onnx:${missing}` });
    expect(code).toBe(0);
    expect(out).toBe(
      `${[GREY.high, GREY.low].map(([a, b]) => JSON.stringify(judgeTitles(a, b))).join("\n")}\n`,
    );
    const lines = err.trimEnd().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /^dedup-pairs: stage 4 off: the configured model did not load \(no ONNX model directory at .*no-such-onnx-model.*\); grey pairs print as review$/,
    );
    // Input with no grey pair never needs the model: nothing said.
    const settled = cli("same\tsame\n", [], { WIREWATCH_EMBEDDING_MODEL: `onnx:${missing}` });
    expect(settled).toMatchObject({
      code: 0,
      err: "",
      out: '{"duplicate":true,"stage":"exact","score":1}\n',
    });
  });

  it("--no-meaning: stages 1-3 only, nothing said", () => {
    const input = `${GREY.high.join("\t")}\n`;
    const { code, out, err } = cli(input, ["--no-meaning", "--calibration", calibrationFile()]);
    expect({ code, err }).toEqual({ code: 0, err: "" });
    expect(out).toBe(`${JSON.stringify(judgeTitles(...GREY.high))}\n`);
  });

  it("refuses a calibration of another model, or an unknown flag (exit 2)", () => {
    const other = cli("a\tb\n", ["--calibration", calibrationFile("onnx:e5-small@1")]);
    expect(other.code).toBe(2);
    expect(other.err).toMatch(
      /is for onnx:e5-small@1, but stage 4 embeds with shipped:use-lite@0\.2\.0/,
    );
    expect(other.out).toBe("");
    const flag = cli("a\tb\n", ["--fast"]);
    expect(flag.code).toBe(2);
    expect(flag.err).toMatch(/--fast/);
  });
});
