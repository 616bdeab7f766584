import { execFile } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { countTokens, simulatedVector } from "./embeddings";
import { type Simulator, startSimulator } from "./server";

let sim: Simulator;
let keyed: Simulator;
beforeAll(async () => {
  sim = await startSimulator({ seed: 3, manual: true });
  keyed = await startSimulator({
    seed: 3,
    manual: true,
    embeddings: { apiKey: "sk-test", dims: 8 },
  });
});
afterAll(async () => {
  await Promise.all([sim.stop(), keyed.stop()]);
});
afterEach(() => sim.control.clearAll());

async function embed(body: unknown, target: Simulator = sim, headers: Record<string, string> = {}) {
  const res = await fetch(`${target.url}/v1/embeddings`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
  const text = await res.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  // biome-ignore lint/suspicious/noExplicitAny: answers are JSON read field by field
  return { status: res.status, headers: res.headers, text, json: json as Record<string, any> };
}

const dot = (a: number[], b: number[]) => a.reduce((s, x, i) => s + x * (b[i] as number), 0);

describe("simulator embeddings endpoint (POST /v1/embeddings)", () => {
  it("answers an OpenAI-shaped list of unit vectors with the model echoed and tokens counted", async () => {
    const input = ["Fed raises interest rates", "The Fed raises rates again", "Cyclone hits coast"];
    const r = await embed({ model: "sim-embed", input });
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({
      object: "list",
      model: "sim-embed",
      usage: { prompt_tokens: 4 + 5 + 3, total_tokens: 12 },
    });
    const data = r.json.data as { index: number; embedding: number[] }[];
    expect(data.map((d) => d.index)).toEqual([0, 1, 2]);
    for (const d of data) {
      expect(d.embedding).toHaveLength(256);
      expect(Math.hypot(...d.embedding)).toBeCloseTo(1, 5);
    }
    const [a, b, c] = data.map((d) => d.embedding) as [number[], number[], number[]];
    expect(dot(a, b)).toBeGreaterThan(dot(a, c) + 0.2);
    // The same text, the same vector, in any request.
    const again = await embed({ model: "other", input: "Fed raises interest rates" });
    expect(again.json.data[0].embedding).toEqual(a);
    expect(sim.embeddings.stats).toMatchObject({ answered: 2, inputs: 4 });
  });

  it("takes `dimensions`, counts Bangla words as tokens, and refuses what OpenAI refuses", async () => {
    const r = await embed({ model: "m", input: ["ঢাকায় ১২ জন নিহত।"], dimensions: 16 });
    expect(r.json.data[0].embedding).toHaveLength(16);
    expect(countTokens("ঢাকায় ১২ জন নিহত।")).toBe(5);
    expect((await embed({ model: "m", input: ["ok", ""] })).json.error.message).toMatch(
      /input\[1\] is an empty string/,
    );
    expect((await embed("{not json")).status).toBe(400);
    expect((await embed({ input: ["no model"] })).status).toBe(400);
    expect((await fetch(`${sim.url}/v1/embeddings`)).status).toBe(405);
  });

  it("lists data last input first when asked to, each vector with its index", async () => {
    const reversed = await startSimulator({ manual: true, embeddings: { reverseOrder: true } });
    try {
      const r = await embed({ model: "m", input: ["a", "b", "c"] }, reversed);
      expect(r.json.data.map((d: { index: number }) => d.index)).toEqual([2, 1, 0]);
      const inOrder = await embed({ model: "m", input: ["a", "b", "c"] });
      expect(r.json.data[2].embedding).toEqual(inOrder.json.data[0].embedding);
    } finally {
      await reversed.stop();
    }
  });

  it("asks for the API key when it has one", async () => {
    expect((await embed({ model: "m", input: "x" }, keyed)).status).toBe(401);
    const ok = await embed({ model: "m", input: "x" }, keyed, { authorization: "Bearer sk-test" });
    expect(ok.status).toBe(200);
    expect(ok.json.data[0].embedding).toHaveLength(8);
  });

  it("answers 429 with Retry-After for the next N requests, then vectors again", async () => {
    sim.control.inject("embeddings", { kind: "429", retryAfter: 2, calls: 2 });
    expect(sim.control.faults()).toEqual([
      { sourceId: "embeddings", faults: [{ kind: "429", retryAfter: 2, calls: 2 }] },
    ]);
    for (const left of [1, 0]) {
      const r = await embed({ model: "m", input: "x" });
      expect(r.status).toBe(429);
      expect(r.headers.get("retry-after")).toBe("2");
      expect(r.json.error.type).toBe("rate_limit_error");
      expect(sim.control.faults().length).toBe(left);
    }
    expect((await embed({ model: "m", input: "x" })).status).toBe(200);
  });

  it("keeps a fault without `calls` until it is cleared: 500, 503", async () => {
    sim.control.inject("embeddings", { kind: "500" });
    expect((await embed({ model: "m", input: "x" })).status).toBe(500);
    expect((await embed({ model: "m", input: "x" })).status).toBe(500);
    sim.control.clear("embeddings", "500");
    sim.control.inject("embeddings", { kind: "503", calls: 1 });
    expect((await embed({ model: "m", input: "x" })).status).toBe(503);
    expect((await embed({ model: "m", input: "x" })).status).toBe(200);
  });

  it("answers late under latency", async () => {
    sim.control.inject("embeddings", { kind: "latency", ms: 300, calls: 1 });
    const started = performance.now();
    expect((await embed({ model: "m", input: "x" })).status).toBe(200);
    expect(performance.now() - started).toBeGreaterThanOrEqual(290);
  });

  it("answers vectors one dimension too long under wrong-dims", async () => {
    sim.control.inject("embeddings", { kind: "wrong-dims", calls: 1 });
    const r = await embed({ model: "m", input: ["a", "b"] });
    expect(r.status).toBe(200);
    expect(r.json.data.map((d: { embedding: number[] }) => d.embedding.length)).toEqual([257, 257]);
  });

  it("answers four kinds of malformed body in turn", async () => {
    sim.control.inject("embeddings", { kind: "malformed", calls: 4 });
    const input = ["a", "b"];
    const notJson = await embed({ model: "m", input });
    expect(notJson.status).toBe(200);
    expect(notJson.json).toBeUndefined();
    expect((await embed({ model: "m", input })).json.data).toBeUndefined();
    expect((await embed({ model: "m", input })).json.data).toHaveLength(1);
    const spoilt = (await embed({ model: "m", input })).json.data[0].embedding;
    expect(typeof spoilt[0]).toBe("string");
    expect((await embed({ model: "m", input })).json.data).toHaveLength(2);
  });

  it("refuses its own faults and `calls` on news sources, and news faults on itself", () => {
    expect(() => sim.control.inject("ledger-rss", { kind: "wrong-dims" })).toThrow(
      /applies to the embeddings endpoint/,
    );
    expect(() => sim.control.inject("ledger-rss", { kind: "503", calls: 1 })).toThrow(
      /"calls" applies to the embeddings endpoint/,
    );
    expect(() => sim.control.inject("embeddings", { kind: "stall" })).toThrow(/applies to streams/);
    expect(() => sim.control.inject("embeddings", { kind: "500", calls: 0 })).toThrow(/calls/);
    // malformed still applies to feeds
    expect(sim.control.inject("ledger-rss", { kind: "malformed" })).toEqual({ kind: "malformed" });
  });

  it("is driven from a shell: npm run -s cli -- sim fault embeddings 429 1 --calls 2", async () => {
    const root = path.resolve(import.meta.dirname, "..");
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [
        "--import",
        "tsx",
        "cli/index.ts",
        "sim",
        "fault",
        "embeddings",
        "429",
        "1",
        "--calls",
        "2",
        "--url",
        sim.url,
      ],
      { cwd: root, env: { ...process.env, LOG_LEVEL: "silent" } },
    );
    expect(stdout.trim()).toBe("embeddings: 429 (Retry-After 1 s) for the next 2 request(s)");
    expect(sim.control.faults()[0]?.faults).toEqual([{ kind: "429", retryAfter: 1, calls: 2 }]);
  });

  it("gives every text a unit vector, one with no words too", () => {
    for (const text of ["!!!", "😀", "a"]) {
      expect(Math.hypot(...simulatedVector(text, 32))).toBeCloseTo(1, 5);
    }
    expect(simulatedVector("same words", 32, 1)).not.toEqual(simulatedVector("same words", 32, 2));
  });
});
