import { spawn } from "node:child_process";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { validateExtraction } from "@/lib/extract/schema";
import { type Simulator, startSimulator } from "@/simulator/server";

// `npm run -s cli -- extract` as the outside checks run it: a real process, JSON lines in,
// stdout, stderr and the exit code read; the llm provider against the simulator over real HTTP.

const ROOT = path.resolve(import.meta.dirname, "../..");

/** This process's environment, less the extraction settings of the machine running the tests. */
function childEnv(settings: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, LOG_LEVEL: "silent" };
  for (const key of Object.keys(env)) {
    if (key.startsWith("WIREWATCH_EXTRACT_") || key === "WIREWATCH_LLM_PRICES") delete env[key];
  }
  return Object.assign(env, settings);
}

function cli(input: string, env: Record<string, string> = {}, args: string[] = []) {
  return new Promise<{ code: number | null; out: string; err: string }>((resolve, reject) => {
    const child = spawn("npm", ["run", "-s", "cli", "--", "extract", ...args], {
      cwd: ROOT,
      env: childEnv(env),
    });
    let out = "";
    let err = "";
    child.stdout.on("data", (d: Buffer) => {
      out += d;
    });
    child.stderr.on("data", (d: Buffer) => {
      err += d;
    });
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, out, err }));
    child.stdin.end(input);
  });
}

const lines = (text: string) =>
  text
    .trimEnd()
    .split("\n")
    .map((l) => JSON.parse(l));
const KEYS = [
  "language",
  "category",
  "entities",
  "provider",
  "model",
  "tokensIn",
  "tokensOut",
  "costUsd",
];

let sim: Simulator;
beforeAll(async () => {
  sim = await startSimulator({ manual: true });
});
afterAll(() => sim.stop());

describe("npm run -s cli -- extract", () => {
  it("prints one line per item from the local provider by default, exactly the contract's fields", async () => {
    const input = [
      { title: "Floods hit Sylhet as rivers swell" },
      { title: "GP-র শেয়ারের দাম আজ ৩% বেড়েছে", summary: "ঢাকা স্টক এক্সচেঞ্জে লেনদেন বেড়েছে।" },
      { title: "La inflación se moderó en octubre", summary: null },
    ];
    const { code, out, err } = await cli(`${input.map((i) => JSON.stringify(i)).join("\n")}\n`);
    expect(err).toBe("");
    expect(code).toBe(0);
    const got = lines(out);
    expect(got).toHaveLength(3);
    for (const line of got) {
      expect(Object.keys(line)).toEqual(KEYS);
      expect(line).toMatchObject({
        provider: "local",
        model: "local-rules@1",
        tokensIn: 0,
        tokensOut: 0,
        costUsd: 0,
      });
      const { language, category, entities } = line;
      expect(validateExtraction({ language, category, entities, summary: null }).ok).toBe(true);
    }
    expect(got.map((l) => [l.language, l.category])).toEqual([
      ["en", "weather"],
      ["bn", "markets"],
      ["other", null],
    ]);
    expect(got[1].entities).toEqual(
      expect.arrayContaining([
        { text: "GP", type: "instrument" },
        { text: "ঢাকা স্টক এক্সচেঞ্জ", type: "organization" },
      ]),
    );
  });

  it("answers a line that is not JSON or has no title with null, names it on stderr, goes on, exits 1", async () => {
    const input = [
      "not json",
      '{"title":"Fire in Khulna"}',
      '{"summary":"no title"}',
      '{"title":"  "}',
      "[1]",
      "",
      '{"title":"Rain"}',
    ];
    const { code, out, err } = await cli(`${input.join("\n")}\n`);
    const got = out.trimEnd().split("\n");
    expect(got).toHaveLength(7);
    expect(got.map((l) => (l === "null" ? null : JSON.parse(l).provider))).toEqual([
      null,
      "local",
      null,
      null,
      null,
      null,
      "local",
    ]);
    expect(lines(err).map((e) => e.line)).toEqual([1, 3, 4, 5, 6]);
    expect(lines(err)[0].error).toMatch(/^not JSON/);
    expect(lines(err)[1].error).toMatch(/^no title/);
    expect(code).toBe(1);
  });

  it("prints nothing for empty input, and takes CRLF line ends", async () => {
    expect(await cli("")).toMatchObject({ code: 0, out: "", err: "" });
    const crlf = await cli('{"title":"Rain in Dhaka"}\r\n{"title":"ঢাকায় বৃষ্টি"}\r\n');
    expect(lines(crlf.out).map((l) => l.language)).toEqual(["en", "bn"]);
  });

  it("uses the chat server when one is configured: its model, tokens and cost; the local one when it rate-limits", async () => {
    const env = {
      WIREWATCH_EXTRACT_LLM_URL: `${sim.url}/v1`,
      WIREWATCH_EXTRACT_LLM_MODEL: "sim-extract-1",
    };
    const up = await cli('{"title":"Gold prices rise as dollar weakens"}\n', env);
    expect(up.code).toBe(0);
    const [line] = lines(up.out);
    expect(line).toMatchObject({ provider: "llm", model: "sim-extract-1" });
    expect(line.tokensIn).toBeGreaterThan(0);
    expect(line.costUsd).toBeGreaterThan(0);
    sim.control.inject("llm", { kind: "429", retryAfter: 120 });
    try {
      const limited = await cli('{"title":"Gold prices rise"}\n{"title":"Oil slips"}\n', env);
      expect(limited.code).toBe(0);
      expect(lines(limited.out).map((l) => l.provider)).toEqual(["local", "local"]);
    } finally {
      sim.control.clearAll();
    }
  });

  it("stops at the budget: the paid provider until it is spent, then the local one", async () => {
    const env = {
      WIREWATCH_EXTRACT_LLM_URL: `${sim.url}/v1`,
      WIREWATCH_EXTRACT_LLM_MODEL: "sim-extract-1",
      WIREWATCH_EXTRACT_LLM_DAILY_BUDGET_USD: "0.0001",
    };
    const { code, out } = await cli(
      '{"title":"Rain in Dhaka"}\n{"title":"Rain in Sylhet"}\n{"title":"Rain in Khulna"}\n',
      env,
    );
    expect(code).toBe(0);
    const providers = lines(out).map((l) => l.provider);
    expect(providers[0]).toBe("llm");
    expect(providers.at(-1)).toBe("local");
  });

  it("refuses arguments", async () => {
    const { code, err } = await cli("", {}, ["--model", "x"]);
    expect(code).toBe(2);
    expect(err).toContain("extract takes no arguments");
  });
});
