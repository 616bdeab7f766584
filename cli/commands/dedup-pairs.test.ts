import { spawnSync } from "node:child_process";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { judgeTitles } from "@/lib/dedup";

const ROOT = path.resolve(import.meta.dirname, "../..");

function cli(input: string) {
  const r = spawnSync("npm", ["run", "-s", "cli", "--", "dedup-pairs"], {
    cwd: ROOT,
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
