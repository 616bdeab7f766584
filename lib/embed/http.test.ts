import { createServer } from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "@/lib/testing/db";
import { simulatedVector } from "@/simulator/embeddings";
import { type Simulator, startSimulator } from "@/simulator/server";
import { FailoverEmbedder } from "./failover";
import { estimateTokens, HttpEmbedder, type HttpEmbedderOptions, parseRetryAfter } from "./http";
import { DatabaseCallLedger, MemoryCallLedger } from "./ledger";
import { LEXICAL_MODEL, LexicalEmbedder } from "./lexical";
import { EmbeddingError } from "./types";

// The HTTP provider against the simulator's OpenAI-compatible endpoint, over real HTTP, with
// the simulator's faults; the cost ledger on a real database (PGlite, or TEST_DATABASE_URL).

let sim: Simulator;
let db: TestDatabase;
beforeAll(async () => {
  [sim, db] = await Promise.all([startSimulator({ seed: 5, manual: true }), createTestDatabase()]);
});
afterAll(async () => {
  await Promise.all([sim.stop(), db.drop()]);
});
afterEach(() => sim.control.clearAll());

// Short waits so the retries do not slow the suite; the policies themselves are lib/backoff's.
function embedder(ledger: MemoryCallLedger, overrides: Partial<HttpEmbedderOptions> = {}) {
  return new HttpEmbedder({
    baseUrl: `${sim.url}/v1`,
    model: "sim-embed",
    dims: 256,
    pricePerMillionTokens: 0.02,
    ledger,
    backoff: { baseMs: 10, capMs: 40 },
    ...overrides,
  });
}

const statuses = (ledger: MemoryCallLedger) => ledger.calls.map((c) => c.status ?? null);

describe("HTTP embedder (OpenAI-compatible) against the simulator", () => {
  it("answers unit vectors under its model id, each attempt in the ledger with its cost", async () => {
    const ledger = new MemoryCallLedger();
    const http = embedder(ledger);
    const texts = ["Fed raises interest rates", "ঢাকায় ১২ জন নিহত"];
    const batch = await http.embed(texts);
    expect(batch.model).toMatchObject({
      model: `http:sim-embed@127.0.0.1:${sim.port}`,
      provider: "http",
      name: "sim-embed",
      dims: 256,
      kind: "meaning",
    });
    expect(batch.vectors.map((v) => v.length)).toEqual([256, 256]);
    // The simulator's own vectors (its answers are unit length already).
    expect(Array.from(batch.vectors[0] as Float32Array)).toEqual(
      Array.from(simulatedVector(texts[0] as string, 256, 1)).map((x) => Math.fround(x)),
    );
    expect(ledger.calls).toEqual([
      expect.objectContaining({
        purpose: "embed",
        provider: "http",
        model: batch.model.model,
        ok: true,
        status: 200,
        items: 2,
        inputTokens: 4 + 4,
        costUsd: (8 * 0.02) / 1e6,
        attempt: 1,
      }),
    ]);
  });

  it("429 with Retry-After: waits as told, then succeeds", async () => {
    sim.control.inject("embeddings", { kind: "429", retryAfter: 1, calls: 1 });
    const ledger = new MemoryCallLedger();
    const started = performance.now();
    const batch = await embedder(ledger).embed(["x"]);
    expect(performance.now() - started).toBeGreaterThanOrEqual(950);
    expect(batch.vectors).toHaveLength(1);
    expect(statuses(ledger)).toEqual([429, 200]);
    expect(ledger.calls.map((c) => c.attempt)).toEqual([1, 2]);
    expect(ledger.calls[0]).toMatchObject({ ok: false, inputTokens: 0, costUsd: 0 });
  });

  it("a Retry-After past the cap gives up at once as rate_limited", async () => {
    sim.control.inject("embeddings", { kind: "429", retryAfter: 120 });
    const ledger = new MemoryCallLedger();
    const started = performance.now();
    const call = embedder(ledger, { maxRetryAfterMs: 5_000 }).embed(["x"]);
    await expect(call).rejects.toMatchObject({
      name: "EmbeddingError",
      code: "rate_limited",
      message: expect.stringMatching(/Retry-After 120 s is past the 5 s cap/),
    });
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(statuses(ledger)).toEqual([429]);
  });

  it("429 persisting: retried, then falls over to the fallback, whose model is on the batch", async () => {
    sim.control.inject("embeddings", { kind: "429", retryAfter: 0 });
    const ledger = new MemoryCallLedger();
    const failovers: string[] = [];
    const embed = new FailoverEmbedder(embedder(ledger, { attempts: 3 }), new LexicalEmbedder(), {
      onFailover: (err, batch) => failovers.push(`${err.code} → ${batch.model.model}`),
    });
    const batch = await embed.embed(["Fed raises rates", "Port strike ends"]);
    expect(batch.model).toBe(LEXICAL_MODEL);
    expect(batch.vectors.map((v) => v.length)).toEqual([512, 512]);
    expect(statuses(ledger)).toEqual([429, 429, 429]);
    expect(failovers).toEqual(["rate_limited → lexical:char3-hash-512@1"]);
    expect(embed.info.provider).toBe("http"); // the healthy model is still the primary
  });

  it("500 is retried with back-off until an answer", async () => {
    sim.control.inject("embeddings", { kind: "500", calls: 2 });
    const ledger = new MemoryCallLedger();
    await expect(embedder(ledger).embed(["x"])).resolves.toMatchObject({
      vectors: [expect.any(Float32Array)],
    });
    expect(statuses(ledger)).toEqual([500, 500, 200]);
    expect(ledger.calls[0]?.error).toMatch(/HTTP 500: Internal error/);
  });

  it("a slow server times out per attempt: provider_error, never a hang", async () => {
    sim.control.inject("embeddings", { kind: "latency", ms: 5_000 });
    const ledger = new MemoryCallLedger();
    const started = performance.now();
    const call = embedder(ledger, { timeoutMs: 250, attempts: 2 }).embed(["x"]);
    await expect(call).rejects.toMatchObject({
      code: "provider_error",
      message: expect.stringMatching(/no answer within 250 ms \(2 attempts\)/),
    });
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(ledger.calls.map((c) => [c.ok, c.error])).toEqual([
      [false, "no answer within 250 ms"],
      [false, "no answer within 250 ms"],
    ]);
  });

  it("wrong dimensions: invalid_answer, nothing returned, not retried, what it cost recorded", async () => {
    sim.control.inject("embeddings", { kind: "wrong-dims" });
    const ledger = new MemoryCallLedger();
    await expect(embedder(ledger).embed(["a b c"])).rejects.toMatchObject({
      code: "invalid_answer",
      message: expect.stringMatching(/vector 0 has 257 dimensions, the model has 256/),
    });
    expect(ledger.calls).toEqual([
      expect.objectContaining({
        ok: false,
        status: 200,
        inputTokens: 3,
        costUsd: (3 * 0.02) / 1e6,
      }),
    ]);
  });

  it("malformed answers: not JSON, no data, a vector short, a string for a number — all refused", async () => {
    sim.control.inject("embeddings", { kind: "malformed", calls: 4 });
    const ledger = new MemoryCallLedger();
    const http = embedder(ledger);
    const why = [];
    for (let i = 0; i < 4; i++) {
      const err = await http.embed(["a", "b"]).catch((e: EmbeddingError) => e);
      expect(err).toBeInstanceOf(EmbeddingError);
      expect((err as EmbeddingError).code).toBe("invalid_answer");
      why.push((err as EmbeddingError).message.replace(/^.*?: /, ""));
    }
    expect(why).toEqual([
      "the answer is not JSON",
      expect.stringMatching(/^not an embeddings answer: data /),
      "1 vectors for 2 inputs",
      expect.stringMatching(/^not an embeddings answer: data\.0\.embedding\.0 /),
    ]);
    expect(ledger.calls).toHaveLength(4);
    expect(ledger.calls.every((c) => !c.ok)).toBe(true);
    // The next answer is well formed again, and taken.
    await expect(http.embed(["a", "b"])).resolves.toMatchObject({ model: http.info });
  });

  it("puts vectors in input order by their index, whatever order the server lists them in", async () => {
    const reversed = await startSimulator({ manual: true, embeddings: { reverseOrder: true } });
    try {
      const texts = ["first text", "second text", "third text"];
      const http = new HttpEmbedder({ baseUrl: `${reversed.url}/v1`, model: "m", dims: 256 });
      const { vectors } = await http.embed(texts);
      texts.forEach((t, i) => {
        expect(Array.from(vectors[i] as Float32Array)).toEqual(
          Array.from(simulatedVector(t, 256)).map((x) => Math.fround(x)),
        );
      });
    } finally {
      await reversed.stop();
    }
  });

  it("opens its breaker after repeated failures; while open a call fails fast, or falls over", async () => {
    sim.control.inject("embeddings", { kind: "500" });
    const ledger = new MemoryCallLedger();
    const http = embedder(ledger, { attempts: 2, breaker: { threshold: 3, coolDownMs: 400 } });
    await expect(http.embed(["x"])).rejects.toMatchObject({ code: "provider_error" });
    // The third failed request opens it: the second call's second attempt is never sent.
    await expect(http.embed(["x"])).rejects.toMatchObject({
      message: expect.stringMatching(/breaker is open/),
    });
    expect(http.breaker.state).toBe("open");
    const sent = sim.embeddings.stats.requests;
    const started = performance.now();
    await expect(http.embed(["x"])).rejects.toMatchObject({
      code: "provider_error",
      message: expect.stringMatching(/breaker is open after repeated failures; no request sent/),
    });
    const failover = new FailoverEmbedder(http, new LexicalEmbedder());
    expect((await failover.embed(["x"])).model).toBe(LEXICAL_MODEL);
    expect(performance.now() - started).toBeLessThan(100);
    expect(sim.embeddings.stats.requests).toBe(sent);
    expect(ledger.calls).toHaveLength(3);

    // After the cool-down one probe goes; the supplier is back, so it closes.
    sim.control.clearAll();
    await new Promise((r) => setTimeout(r, 450));
    expect(http.breaker.state).toBe("half_open");
    await expect(http.embed(["x"])).resolves.toMatchObject({ model: http.info });
    expect(http.breaker.state).toBe("closed");
  });

  it("a refused connection is retried, then provider_error", async () => {
    const port = await freePort();
    const ledger = new MemoryCallLedger();
    const http = embedder(ledger, { baseUrl: `http://127.0.0.1:${port}/v1`, attempts: 2 });
    await expect(http.embed(["x"])).rejects.toMatchObject({
      code: "provider_error",
      message: expect.stringMatching(/no answer: ECONNREFUSED/),
    });
    expect(ledger.calls).toHaveLength(2);
  });

  it("sends the API key; a wrong one is unavailable at once, not retried", async () => {
    const keyed = await startSimulator({
      manual: true,
      embeddings: { apiKey: "sk-right", dims: 4 },
    });
    try {
      const ledger = new MemoryCallLedger();
      const base = { baseUrl: `${keyed.url}/v1`, dims: 4 };
      await expect(
        embedder(ledger, { ...base, apiKey: "sk-wrong" }).embed(["x"]),
      ).rejects.toMatchObject({
        code: "unavailable",
        message: expect.stringMatching(/HTTP 401.*check the API key/),
      });
      expect(statuses(ledger)).toEqual([401]);
      await expect(
        embedder(ledger, { ...base, apiKey: "sk-right" }).embed(["x"]),
      ).resolves.toBeTruthy();
    } finally {
      await keyed.stop();
    }
  });

  it("paces requests to the configured rate, over all callers", async () => {
    const ledger = new MemoryCallLedger();
    const http = embedder(ledger, { requestsPerMinute: 600 }); // one per 100 ms
    const started = performance.now();
    await Promise.all([1, 2, 3, 4].map((i) => http.embed([`text ${i}`])));
    expect(performance.now() - started).toBeGreaterThanOrEqual(290);
    expect(ledger.calls).toHaveLength(4);
  });

  it("stops when the caller aborts, without retrying", async () => {
    sim.control.inject("embeddings", { kind: "latency", ms: 5_000 });
    const ledger = new MemoryCallLedger();
    const abort = new AbortController();
    const call = embedder(ledger).embed(["x"], { signal: abort.signal });
    setTimeout(() => abort.abort(new Error("shutting down")), 100);
    await expect(call).rejects.toThrow("shutting down");
    expect(ledger.calls).toEqual([
      expect.objectContaining({ ok: false, error: "aborted by the caller" }),
    ]);
  });

  it("refuses bad input before sending anything", async () => {
    const ledger = new MemoryCallLedger();
    await expect(embedder(ledger).embed(["fine", " "])).rejects.toMatchObject({
      code: "bad_input",
    });
    expect(ledger.calls).toHaveLength(0);
  });

  it("writes every attempt to provider_calls through the database ledger", async () => {
    sim.control.inject("embeddings", { kind: "503", calls: 1 });
    const ledger = new DatabaseCallLedger(db);
    const http = new HttpEmbedder({
      baseUrl: `${sim.url}/v1`,
      model: "ledgered",
      dims: 256,
      pricePerMillionTokens: 1.5,
      ledger,
      backoff: { baseMs: 10, capMs: 20 },
    });
    await http.embed(["one two three", "four"]);
    await ledger.flush();
    const rows = await db.prisma.providerCall.findMany({
      where: { model: http.info.model },
      orderBy: { id: "asc" },
    });
    expect(rows.map((r) => [r.ok, r.status, r.attempt, r.items, r.inputTokens])).toEqual([
      [false, 503, 1, 2, 0],
      [true, 200, 2, 2, 4],
    ]);
    expect(rows[1]?.costUsd).toBeCloseTo((4 * 1.5) / 1e6, 12);
    expect(rows[0]?.error).toMatch(/HTTP 503/);
    expect(rows.every((r) => r.purpose === "embed" && r.provider === "http")).toBe(true);
  });
});

describe("HTTP embedder's helpers", () => {
  it("reads Retry-After as seconds or an HTTP date", () => {
    const now = Date.parse("2026-06-12T09:00:00Z");
    expect(parseRetryAfter("2", now)).toBe(2_000);
    expect(parseRetryAfter("0.5", now)).toBe(500);
    expect(parseRetryAfter("Fri, 12 Jun 2026 09:00:30 GMT", now)).toBe(30_000);
    expect(parseRetryAfter("Fri, 12 Jun 2026 08:00:00 GMT", now)).toBe(0);
    expect(parseRetryAfter("soon", now)).toBeUndefined();
    expect(parseRetryAfter(null, now)).toBeUndefined();
  });

  it("estimates tokens from UTF-8 bytes when the server gives no usage", () => {
    expect(estimateTokens(["abcd", "abcde"])).toBe(1 + 2);
    expect(estimateTokens(["ঢাকা"])).toBe(3); // 4 letters, 12 bytes
  });

  it("refuses a configuration it cannot use", () => {
    expect(() => new HttpEmbedder({ baseUrl: "nope", model: "m", dims: 3 })).toThrow(/not a URL/);
    expect(() => new HttpEmbedder({ baseUrl: "ftp://x/v1", model: "m", dims: 3 })).toThrow(
      /http or https/,
    );
    expect(() => new HttpEmbedder({ baseUrl: "http://x/v1", model: "m", dims: 0 })).toThrow(/dims/);
  });
});

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}
