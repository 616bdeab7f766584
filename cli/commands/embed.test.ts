import { spawn } from "node:child_process";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { lexicalVector } from "@/lib/embed/lexical";
import { cosine } from "@/lib/embed/vector";
import { type Simulator, startSimulator } from "@/simulator/server";

// `npm run -s cli -- embed` as the outside checks run it: a real process, stdin in, stdout and
// the exit code read.

const ROOT = path.resolve(import.meta.dirname, "../..");
/** This process's environment, less the embedding settings of the machine running the tests. */
function childEnv(settings: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, LOG_LEVEL: "silent" };
  for (const key of Object.keys(env)) {
    if (key.startsWith("WIREWATCH_EMBEDDING_")) delete env[key];
  }
  return Object.assign(env, settings);
}

function cli(input: string, args: string[] = [], env: Record<string, string> = {}) {
  return new Promise<{ code: number | null; out: string; err: string }>((resolve, reject) => {
    const child = spawn("npm", ["run", "-s", "cli", "--", "embed", ...args], {
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

interface Line {
  model: string;
  dims: number;
  vector: number[];
}
const parse = (out: string) =>
  out
    .trimEnd()
    .split("\n")
    .map((l) => JSON.parse(l) as Line | null);

let sim: Simulator;
beforeAll(async () => {
  sim = await startSimulator({ manual: true });
});
afterAll(() => sim.stop());

describe("npm run -s cli -- embed", () => {
  it("prints one line per input line from the shipped model by default: model, dims, vector", async () => {
    const { code, out, err } = await cli(
      "The central bank raised interest rates\nInterest rates were raised by the central bank\nHeavy rain floods the river villages\n",
    );
    expect(err).toBe("");
    expect(code).toBe(0);
    const lines = out.trimEnd().split("\n");
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatch(/^\{"model":"shipped:use-lite@0\.2\.0","dims":512,"vector":\[-?\d/);
    const [a, b, c] = parse(out) as Line[];
    for (const line of [a, b, c] as Line[]) {
      expect(line.vector).toHaveLength(512);
      expect(Math.hypot(...line.vector)).toBeCloseTo(1, 5);
    }
    const v = (l: Line) => Float32Array.from(l.vector);
    expect(cosine(v(a as Line), v(b as Line))).toBeGreaterThan(
      cosine(v(a as Line), v(c as Line)) + 0.3,
    );
  });

  it("--model lexical prints the lexical vectors exactly, in input order, 9 significant digits", async () => {
    const texts = Array.from({ length: 70 }, (_, i) => `headline ${i} ${"abc".repeat(i % 5)}`);
    const { code, out } = await cli(`${texts.join("\n")}\n`, ["--model", "lexical"]);
    expect(code).toBe(0);
    const lines = parse(out) as Line[];
    expect(lines).toHaveLength(70);
    lines.forEach((line, i) => {
      expect(line.model).toBe("lexical:char3-hash-512@1");
      expect(line.dims).toBe(512);
      expect(Float32Array.from(line.vector)).toEqual(lexicalVector(texts[i] as string));
    });
  });

  it("answers an empty or blank line with null, names it on stderr, goes on, and exits 1", async () => {
    const { code, out, err } = await cli("first\n\nsecond\n \t\nthird", ["--model", "lexical"]);
    expect(
      out
        .trimEnd()
        .split("\n")
        .map((l) => (l === "null" ? null : JSON.parse(l).model)),
    ).toEqual([
      "lexical:char3-hash-512@1",
      null,
      "lexical:char3-hash-512@1",
      null,
      "lexical:char3-hash-512@1",
    ]);
    expect(
      err
        .trimEnd()
        .split("\n")
        .map((l) => JSON.parse(l)),
    ).toEqual([
      { line: 2, error: "the line is empty: there is nothing to embed" },
      { line: 4, error: "the line is empty: there is nothing to embed" },
    ]);
    expect(code).toBe(1);
  });

  it("prints nothing for empty input, and takes CRLF line ends", async () => {
    expect(await cli("", ["--model", "lexical"])).toMatchObject({ code: 0, out: "", err: "" });
    const crlf = await cli("a b\r\nc d\r\n", ["--model", "lexical:char3-hash-512@1"]);
    expect((parse(crlf.out) as Line[]).map((l) => Float32Array.from(l.vector))).toEqual([
      lexicalVector("a b"),
      lexicalVector("c d"),
    ]);
  });

  it("takes the printed id of the shipped model", async () => {
    const { code, out } = await cli("hello\n", ["--model", "shipped:use-lite@0.2.0"]);
    expect(code).toBe(0);
    expect((parse(out)[0] as Line).model).toBe("shipped:use-lite@0.2.0");
  });

  it("embeds through an OpenAI-compatible server (the simulator), and falls back when it is down", async () => {
    const env = {
      WIREWATCH_EMBEDDING_URL: `${sim.url}/v1`,
      WIREWATCH_EMBEDDING_DIMS: "256",
      WIREWATCH_EMBEDDING_FALLBACK: "lexical",
    };
    const up = await cli("one\ntwo\n", ["--model", "http:sim-embed"], env);
    expect(up.code).toBe(0);
    expect((parse(up.out) as Line[]).map((l) => [l.model, l.dims])).toEqual([
      [`http:sim-embed@127.0.0.1:${sim.port}`, 256],
      [`http:sim-embed@127.0.0.1:${sim.port}`, 256],
    ]);
    sim.control.inject("embeddings", { kind: "503" });
    try {
      const down = await cli("one\n", [], { ...env, WIREWATCH_EMBEDDING_MODEL: "http:sim-embed" });
      expect(down.code).toBe(0);
      expect((parse(down.out)[0] as Line).model).toBe("lexical:char3-hash-512@1");
    } finally {
      sim.control.clearAll();
    }
  });

  it("exits 1 with the reason when the model cannot be used", async () => {
    const onnx = await cli("x\n", ["--model", "onnx:/nowhere/multilingual-e5-small"]);
    expect(onnx.code).toBe(1);
    expect(onnx.out).toBe("");
    expect(onnx.err).toMatch(
      /embed: cannot use onnx:\/nowhere\/multilingual-e5-small: no ONNX model directory at/,
    );

    const http = await cli("x\n", ["--model", "http:text-embedding-3-small"]);
    expect(http.code).toBe(1);
    expect(http.err).toMatch(/needs WIREWATCH_EMBEDDING_URL .* and WIREWATCH_EMBEDDING_DIMS/);

    const unknown = await cli("x\n", ["--model", "bert"]);
    expect(unknown.code).toBe(1);
    expect(unknown.err).toMatch(/not a model: "bert"; name one of "shipped", "lexical"/);

    const version = await cli("x\n", ["--model", "shipped:use-lite@9"]);
    expect(version.err).toMatch(/the shipped model here is shipped:use-lite@0\.2\.0/);

    const option = await cli("x\n", ["--dims", "3"]);
    expect(option.code).toBe(2);
    expect(option.err).toMatch(/embed: Unknown option '--dims'/);
  });
});
