import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { Clock } from "@/lib/backoff";
import { type Simulator, startSimulator } from "@/simulator/server";
import { BUILT_IN_PRICES, costOf } from "../prices";
import { extractionJsonSchema, validateExtraction } from "../schema";
import type { ProviderAnswer } from "../types";
import {
  type OpenAICompatibleOptions,
  OpenAICompatibleProvider,
  PROMPT_VERSION,
  SYSTEM_PROMPT,
} from "./openaiCompatible";

// The chat provider against the simulator's OpenAI-compatible endpoint over real HTTP, with its
// faults; a small scripted server for what the simulator does not answer (a 400, an HTTP-date
// Retry-After, a body without usage, a refusal).

let sim: Simulator;
beforeAll(async () => {
  sim = await startSimulator({ seed: 7, manual: true });
});
afterAll(() => sim.stop());
afterEach(() => sim.control.clearAll());

/** Waits are recorded and skipped; time moves by them. */
function testClock(): Clock & { slept: number[]; advance(ms: number): void } {
  let t = Date.now();
  const slept: number[] = [];
  return {
    slept,
    now: () => t,
    sleep: async (ms) => {
      slept.push(ms);
      t += ms;
    },
    random: () => 0.5,
    advance: (ms) => {
      t += ms;
    },
  };
}

function provider(overrides: Partial<OpenAICompatibleOptions> = {}) {
  return new OpenAICompatibleProvider({
    baseUrl: `${sim.url}/v1`,
    model: "sim-extract-1",
    prices: BUILT_IN_PRICES,
    clock: testClock(),
    ...overrides,
  });
}

const item = { title: "Floods hit Sylhet as rivers swell", summary: "Heavy rain for three days." };

describe("OpenAI-compatible provider against the simulator", () => {
  it("answers the content's JSON with the server's usage, priced from the table", async () => {
    const answer = await provider().call(item);
    expect(answer).toMatchObject({ ok: true, status: 200 });
    if (!answer.ok) throw new Error(answer.message);
    expect(validateExtraction(answer.candidate)).toMatchObject({
      ok: true,
      value: { language: "en" },
    });
    expect(answer.tokensIn).toBeGreaterThan(100); // the system prompt is counted
    expect(answer.tokensOut).toBeGreaterThan(5);
    expect(answer.costUsd).toBeCloseTo(
      costOf("sim-extract-1", answer.tokensIn, answer.tokensOut, BUILT_IN_PRICES),
      12,
    );
    expect(JSON.parse(answer.rawText)).toEqual(answer.candidate);
  });

  it("sends the versioned prompt, the item as JSON, and strict structured output", () => {
    const p = provider();
    const body = p.request({ ...item, languageHint: "en-GB" });
    expect(p).toMatchObject({
      name: "llm",
      model: "sim-extract-1",
      promptVersion: PROMPT_VERSION,
      paid: true,
    });
    expect(body).toMatchObject({
      model: "sim-extract-1",
      temperature: 0,
      response_format: {
        type: "json_schema",
        json_schema: { name: "extraction", strict: true, schema: extractionJsonSchema() },
      },
    });
    expect(body.messages).toEqual([
      { role: "system", content: SYSTEM_PROMPT },
      { role: "user", content: JSON.stringify({ ...item, languageHint: "en-GB" }) },
    ]);
    const corrected = p.request(item, {
      previousRaw: '{"language":"fr"}',
      errors: ["language: expected one of bn|en|other"],
    });
    expect(corrected.messages.slice(2)).toEqual([
      { role: "assistant", content: '{"language":"fr"}' },
      {
        role: "user",
        content: expect.stringContaining("- language: expected one of bn|en|other"),
      },
    ]);
  });

  it("a malformed answer is malformed, raw text kept, its tokens billed; the simulator sees the correction", async () => {
    sim.control.inject("llm", { kind: "malformed", calls: 1 });
    const p = provider();
    const bad = await p.call(item);
    expect(bad).toMatchObject({ ok: false, code: "malformed", status: 200 });
    if (bad.ok) throw new Error("accepted");
    expect(bad.rawText?.length).toBeGreaterThan(0);
    expect(bad.tokensIn).toBeGreaterThan(0);
    expect(bad.costUsd).toBeGreaterThan(0);
    const before = sim.chat.stats.corrections;
    const again = await p.call(item, {
      correction: { previousRaw: bad.rawText ?? "", errors: [bad.message] },
    });
    expect(again.ok).toBe(true);
    expect(sim.chat.stats.corrections).toBe(before + 1);
  });

  it("every malformed kind the simulator makes is malformed, never an answer", async () => {
    sim.control.inject("llm", { kind: "malformed", calls: 5 });
    const p = provider();
    const codes: string[] = [];
    for (let i = 0; i < 5; i++) {
      const a = await p.call(item);
      codes.push(a.ok ? "ok" : a.code);
    }
    expect(codes).toEqual(["malformed", "malformed", "malformed", "malformed", "malformed"]);
  });

  it("a schema-violating answer is passed on as a candidate: judging it is the chain's", async () => {
    sim.control.inject("llm", { kind: "schema", calls: 1 });
    const answer = await provider().call(item);
    expect(answer.ok).toBe(true);
    if (answer.ok) expect(validateExtraction(answer.candidate).ok).toBe(false);
  });

  it("429 with a Retry-After under the cap: waits exactly that, tells the retried attempt, answers", async () => {
    sim.control.inject("llm", { kind: "429", retryAfter: 2, calls: 1 });
    const clock = testClock();
    const retried: ProviderAnswer[] = [];
    const answer = await provider({ clock }).call(item, { onRetried: (a) => retried.push(a) });
    expect(answer.ok).toBe(true);
    expect(clock.slept).toEqual([2_000]);
    expect(retried).toEqual([
      expect.objectContaining({
        ok: false,
        code: "rate_limited",
        status: 429,
        retryAfterMs: 2_000,
      }),
    ]);
  });

  it("429 with a Retry-After past the cap: rate_limited at once, with retryAfterMs for the chain", async () => {
    sim.control.inject("llm", { kind: "429", retryAfter: 120 });
    const requests = sim.chat.stats.requests;
    const answer = await provider().call(item);
    expect(answer).toMatchObject({
      ok: false,
      code: "rate_limited",
      status: 429,
      retryAfterMs: 120_000,
    });
    expect(answer.ok ? "" : answer.message).toContain("past the 30 s cap");
    expect(sim.chat.stats.requests).toBe(requests + 1);
  });

  it("500 persisting: three attempts with full jitter, then provider_error; the breaker opens after five", async () => {
    sim.control.inject("llm", { kind: "500" });
    const clock = testClock();
    const p = provider({ clock, backoff: { baseMs: 100, capMs: 400 } });
    const retried: ProviderAnswer[] = [];
    const first = await p.call(item, { onRetried: (a) => retried.push(a) });
    expect(first).toMatchObject({ ok: false, code: "provider_error", status: 500 });
    expect(retried).toHaveLength(2);
    // Full jitter at random() = 0.5: half of 100, then half of 200.
    expect(clock.slept).toEqual([50, 100]);
    const requests = sim.chat.stats.requests;
    const second = await p.call(item);
    expect(second).toMatchObject({ ok: false, code: "breaker_open", status: null, costUsd: 0 });
    // Attempts 4 and 5 went; the fifth failure opened the breaker, the sixth was not sent.
    expect(sim.chat.stats.requests).toBe(requests + 2);
  });

  it("an attempt past its timeout is aborted and retried, then timeout", async () => {
    sim.control.inject("llm", { kind: "latency", ms: 5_000 });
    const started = Date.now();
    const answer = await provider({ timeoutMs: 150, attempts: 2 }).call(item);
    expect(answer).toMatchObject({ ok: false, code: "timeout", status: null });
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it("a wrong URL or key is unavailable, not retried", async () => {
    const requests = sim.chat.stats.requests;
    const answer = await provider({ baseUrl: `${sim.url}/nope` }).call(item);
    expect(answer).toMatchObject({ ok: false, code: "unavailable", status: 405 });
    const keyed = await startSimulator({ manual: true, chat: { apiKey: "right" } });
    try {
      const wrong = await provider({ baseUrl: `${keyed.url}/v1`, apiKey: "wrong" }).call(item);
      expect(wrong).toMatchObject({ ok: false, code: "unavailable", status: 401 });
      const right = await provider({ baseUrl: `${keyed.url}/v1`, apiKey: "right" }).call(item);
      expect(right.ok).toBe(true);
    } finally {
      await keyed.stop();
    }
    expect(sim.chat.stats.requests).toBe(requests);
  });

  it("refuses an empty title as bad_input without a request", async () => {
    const requests = sim.chat.stats.requests;
    expect(await provider().call({ title: " " })).toMatchObject({
      ok: false,
      code: "bad_input",
      costUsd: 0,
    });
    expect(sim.chat.stats.requests).toBe(requests);
  });
});

describe("OpenAI-compatible provider against a scripted server", () => {
  let server: Server;
  let url: string;
  let script: (req: IncomingMessage, res: ServerResponse, body: string) => void;
  beforeAll(async () => {
    server = createServer((req, res) => {
      let body = "";
      req.on("data", (d: Buffer) => {
        body += d;
      });
      req.on("end", () => script(req, res, body));
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  });
  afterAll(() => new Promise<void>((r) => server.close(() => r())));

  const reply =
    (status: number, body: unknown, headers: Record<string, string> = {}) =>
    (_: IncomingMessage, res: ServerResponse) => {
      res.writeHead(status, { "content-type": "application/json", ...headers });
      res.end(typeof body === "string" ? body : JSON.stringify(body));
    };
  const completion = (content: unknown, extra: Record<string, unknown> = {}) => ({
    id: "x",
    object: "chat.completion",
    choices: [
      { index: 0, message: { role: "assistant", content, ...extra }, finish_reason: "stop" },
    ],
  });
  const p = (overrides: Partial<OpenAICompatibleOptions> = {}) =>
    new OpenAICompatibleProvider({
      baseUrl: url,
      model: "gpt-4o-mini",
      prices: BUILT_IN_PRICES,
      clock: testClock(),
      ...overrides,
    });

  it("400, 413 and 422 are bad_input; 403 unavailable; none retried", async () => {
    for (const [status, code] of [
      [400, "bad_input"],
      [413, "bad_input"],
      [422, "bad_input"],
      [403, "unavailable"],
    ] as const) {
      let hits = 0;
      script = (req, res) => {
        hits++;
        reply(status, { error: { message: "no" } })(req, res);
      };
      expect(await p().call(item)).toMatchObject({ ok: false, code, status });
      expect(hits).toBe(1);
    }
  });

  it("a Retry-After given as an HTTP date is honoured", async () => {
    const clock = testClock();
    let hits = 0;
    script = (req, res) => {
      hits++;
      if (hits === 1)
        reply(429, {}, { "retry-after": new Date(clock.now() + 10_000).toUTCString() })(req, res);
      else
        reply(200, {
          ...completion('{"language":"en","category":null,"entities":[],"summary":null}'),
          usage: { prompt_tokens: 10, completion_tokens: 5 },
        })(req, res);
    };
    const answer = await p({ clock }).call(item);
    expect(answer.ok).toBe(true);
    expect(clock.slept).toHaveLength(1);
    expect(clock.slept[0]).toBeGreaterThan(8_000);
    expect(clock.slept[0]).toBeLessThanOrEqual(10_000);
  });

  it("without usage, tokens are estimated from bytes and still priced", async () => {
    script = reply(
      200,
      completion('{"language":"en","category":null,"entities":[],"summary":null}'),
    );
    const answer = await p().call(item);
    expect(answer).toMatchObject({ ok: true });
    expect(answer.tokensIn).toBeGreaterThan(300); // the request body's bytes / 4: prompt and schema
    expect(answer.tokensOut).toBe(
      Math.ceil('{"language":"en","category":null,"entities":[],"summary":null}'.length / 4),
    );
    expect(answer.costUsd).toBeGreaterThan(0);
  });

  it("a refusal, no choices, content not JSON, a body not JSON: malformed with what came, at most 4 KiB", async () => {
    const cases: [unknown, string][] = [
      [completion(null, { refusal: "I cannot help with that." }), "the model refused"],
      [{ id: "x", choices: [] }, "not a chat completion"],
      [completion("Sure! Here it is: {language: en}"), "the content is not JSON"],
      [completion(""), "the content is empty"],
      [`{"choices": [${"x".repeat(10_000)}`, "the answer is not JSON"],
    ];
    for (const [body, message] of cases) {
      script = reply(200, body);
      const answer = await p().call(item);
      expect(answer).toMatchObject({ ok: false, code: "malformed" });
      if (answer.ok) continue;
      expect(answer.message).toContain(message);
      expect(Buffer.byteLength(answer.rawText ?? "")).toBeLessThanOrEqual(4_096);
    }
  });

  it("takes JSON in a Markdown fence", async () => {
    script = reply(
      200,
      completion('```json\n{"language":"en","category":null,"entities":[],"summary":null}\n```'),
    );
    const answer = await p().call(item);
    expect(answer.ok && answer.candidate).toEqual({
      language: "en",
      category: null,
      entities: [],
      summary: null,
    });
  });

  it("a refused connection is provider_error after its retries", async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, "127.0.0.1", r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    const answer = await p({ baseUrl: `http://127.0.0.1:${port}/v1` }).call(item);
    expect(answer).toMatchObject({ ok: false, code: "provider_error", status: null });
    expect(answer.ok ? "" : answer.message).toContain("ECONNREFUSED");
  });
});
