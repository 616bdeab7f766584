import { execFile } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { validateExtraction } from "@/lib/extract/schema";
import { CATEGORIES, ENTITY_TYPES, EXTRACTION_LANGUAGES } from "@/lib/extract/types";
import { keywordCategory, namesIn, scriptLanguage } from "./chatAnswer";
import { countTokens } from "./embeddings";
import { type Simulator, startSimulator } from "./server";

let sim: Simulator;
let keyed: Simulator;
beforeAll(async () => {
  sim = await startSimulator({ seed: 5, manual: true });
  keyed = await startSimulator({ seed: 5, manual: true, chat: { apiKey: "sk-chat" } });
});
afterAll(async () => {
  await Promise.all([sim.stop(), keyed.stop()]);
});
afterEach(() => sim.control.clearAll());

const SYSTEM = "Extract language, category, entities and summary as JSON.";
type Message = { role: string; content: unknown };
const messagesFor = (item: unknown): Message[] => [
  { role: "system", content: SYSTEM },
  { role: "user", content: typeof item === "string" ? item : JSON.stringify(item) },
];

async function chat(
  body: unknown,
  target: Simulator = sim,
  init: { headers?: Record<string, string>; signal?: AbortSignal } = {},
) {
  const res = await fetch(`${target.url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json", ...init.headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
    ...(init.signal ? { signal: init.signal } : {}),
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

const ask = (item: unknown, model = "sim-extract-1") =>
  chat({ model, messages: messagesFor(item), response_format: { type: "json_object" } });

/** The assistant's content as JSON, or undefined when it is not JSON. */
function contentOf(answer: Awaited<ReturnType<typeof chat>>): unknown {
  try {
    return JSON.parse(answer.json.choices[0].message.content);
  } catch {
    return undefined;
  }
}

/** Why a candidate breaks the contract of lib/extract/types.ts (none: it satisfies it). */
function contractErrors(candidate: unknown): string[] {
  if (typeof candidate !== "object" || candidate === null) return ["not an object"];
  const c = candidate as Record<string, unknown>;
  const errors: string[] = [];
  const keys = Object.keys(c).sort().join(",");
  if (keys !== "category,entities,language,summary") errors.push(`keys ${keys}`);
  if (!(EXTRACTION_LANGUAGES as readonly unknown[]).includes(c.language)) errors.push("language");
  if (c.category !== null && !(CATEGORIES as readonly unknown[]).includes(c.category)) {
    errors.push("category");
  }
  if (!Array.isArray(c.entities)) errors.push("entities");
  else {
    for (const e of c.entities as Record<string, unknown>[]) {
      if (typeof e.text !== "string" || e.text === "") errors.push("entity text");
      if (!(ENTITY_TYPES as readonly unknown[]).includes(e.type)) errors.push("entity type");
    }
  }
  if (c.summary !== null && (typeof c.summary !== "string" || c.summary.length > 300)) {
    errors.push("summary");
  }
  return errors;
}

/**
 * Valid by this file's reading of the contract and by the extraction chain's own validator
 * (lib/extract/schema.ts), which takes it as it is: nothing to trim, no repeated entity.
 */
function expectValid(candidate: unknown): void {
  expect(contractErrors(candidate)).toEqual([]);
  const checked = validateExtraction(candidate);
  expect(checked).toEqual({ ok: true, value: candidate });
}

describe("simulator chat endpoint (POST /v1/chat/completions)", () => {
  it("answers an OpenAI chat completion whose content is a valid extraction, with usage", async () => {
    const item = { title: "Cyclone hits Khulna coast, thousands move to shelters" };
    const r = await ask(item, "gpt-4o-mini");
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({
      id: expect.stringMatching(/^chatcmpl-/),
      object: "chat.completion",
      created: expect.any(Number),
      model: "gpt-4o-mini",
      choices: [{ index: 0, message: { role: "assistant" }, finish_reason: "stop" }],
    });
    const content = r.json.choices[0].message.content as string;
    const extraction = JSON.parse(content);
    expectValid(extraction);
    expect(extraction).toEqual({
      language: "en",
      category: "weather",
      entities: [{ text: "Khulna", type: "place" }],
      summary: item.title,
    });
    const prompt = countTokens(SYSTEM) + countTokens(JSON.stringify(item));
    expect(r.json.usage).toEqual({
      prompt_tokens: prompt,
      completion_tokens: countTokens(content),
      total_tokens: prompt + countTokens(content),
    });
    // The same item, the same answer, whatever the model asked for.
    const again = await ask(item, "another-model");
    expect(again.json.choices[0].message.content).toBe(content);
    expect(again.json.model).toBe("another-model");
    expect(sim.chat.model).toBe("sim-extract-1");
  });

  it("answers a story the newsroom published from what the newsroom knows", async () => {
    const story = sim.control.publish({ outlet: "wire", language: "bn" });
    const known = sim.control.truth().items.find((i) => i.title === story.title);
    expect(known).toBeDefined();
    const r = await ask({ title: story.title });
    const extraction = contentOf(r) as Record<string, unknown>;
    expectValid(extraction);
    expect(extraction.language).toBe("bn");
    expect(extraction.category).toBe(story.category);
    // The detail sentence of its summary names a person and a district.
    const entities = extraction.entities as { text: string; type: string }[];
    expect(entities.filter((e) => e.type === "person").length).toBeGreaterThanOrEqual(1);
    expect(entities.filter((e) => e.type === "place").length).toBeGreaterThanOrEqual(1);
    for (const e of entities) expect(`${story.title} ${story.summary}`).toContain(e.text);
    // The item carried no summary: the answer gives the story's.
    expect(extraction.summary).toBe(story.summary);

    const custom = sim.control.publish({
      outlet: "wire",
      language: "en",
      title: "Grameenphone shares jump after record quarter",
      summary: "The operator's profit rose, the company said in Dhaka.",
      category: "markets",
      instruments: ["GP.DH"],
    });
    // Words around the title make it another text: answered by keywords, without the story's
    // instruments.
    const asText = contentOf(await ask(`Item:\n${custom.title}`)) as { entities: unknown[] };
    expectValid(asText);
    expect(asText.entities).not.toContainEqual({ text: "GP.DH", type: "instrument" });
    const withSummary = await ask({ title: custom.title, summary: custom.summary });
    expect(contentOf(withSummary)).toEqual({
      language: "en",
      category: "markets",
      entities: [
        { text: "GP.DH", type: "instrument" },
        { text: "Grameenphone", type: "organization" },
        { text: "Dhaka", type: "place" },
      ],
      summary: null,
    });
  });

  it("gives every story published so far a valid answer in its own language and category", async () => {
    const items = sim.control.truth().items;
    const titles = new Map(items.map((i) => [i.title, i]));
    expect(titles.size).toBeGreaterThan(50);
    const languages = new Set<string>();
    for (const [title, item] of titles) {
      const extraction = contentOf(await ask({ title })) as Record<string, unknown>;
      expectValid(extraction);
      const story = sim.control.stories(item.outlet)[item.number - 1];
      expect(extraction).toMatchObject({ language: item.language, category: story?.category });
      languages.add(item.language);
    }
    expect([...languages].sort()).toEqual(["bn", "en"]);
  });

  it("finds the item as JSON anywhere in a user message, in content parts, or as plain text", async () => {
    const story = sim.control.publish({
      outlet: "wire",
      language: "en",
      title: "Walton opens a plant in Rangpur",
      category: "business",
      instruments: ["WALTONHIL"],
    });
    const expected = {
      language: "en",
      category: "business",
      // Then the people and places of the summary the newsroom made up for it.
      entities: expect.arrayContaining([
        { text: "WALTONHIL", type: "instrument" },
        { text: "Walton", type: "organization" },
        { text: "Rangpur", type: "place" },
      ]),
      summary: story.summary,
    };
    const embedded = await ask(
      `Extract from this item: {"item": {"title": ${JSON.stringify(story.title)}}} thanks`,
    );
    expect(contentOf(embedded)).toEqual(expected);
    const parts = await chat({
      model: "m",
      messages: [
        { role: "system", content: SYSTEM },
        { role: "user", content: [{ type: "text", text: JSON.stringify({ title: story.title }) }] },
      ],
    });
    expect(parts.json.choices[0].message.content).toBe(embedded.json.choices[0].message.content);
    // Plain text: the whole first user message is the title.
    const plain = await ask(story.title);
    expect(plain.json.choices[0].message.content).toBe(embedded.json.choices[0].message.content);
  });

  it("answers a correction retry (more messages) the same way, and counts it", async () => {
    const item = { title: "ঢাকায় ডেঙ্গুতে আরও ১২ জনের মৃত্যু", summary: "স্বাস্থ্য অধিদপ্তর জানায়।" };
    const first = await ask(item);
    const corrections = sim.chat.stats.corrections;
    const retry = await chat({
      model: "m",
      messages: [
        ...messagesFor(item),
        { role: "assistant", content: '{"language":"fr"' },
        {
          role: "user",
          content: "Your answer was invalid: language: expected bn|en|other. Answer again.",
        },
      ],
    });
    expect(retry.json.choices[0].message.content).toBe(first.json.choices[0].message.content);
    expect(contentOf(retry)).toEqual({
      language: "bn",
      category: "health",
      entities: [{ text: "ঢাকা", type: "place" }],
      summary: null,
    });
    expect(retry.json.usage.prompt_tokens).toBeGreaterThan(first.json.usage.prompt_tokens);
    expect(sim.chat.stats.corrections).toBe(corrections + 1);
  });

  it("answers text it does not know by script and keywords", () => {
    expect(scriptLanguage("ঢাকায় ১২ জন নিহত")).toBe("bn");
    expect(scriptLanguage("GP-র শেয়ারের দাম বাড়ল ৫ শতাংশ")).toBe("bn");
    expect(scriptLanguage("Fed cuts rates as growth slows")).toBe("en");
    expect(scriptLanguage("Le gouvernement annonce une réforme des retraites")).toBe("other");
    expect(scriptLanguage("Правительство объявило реформу")).toBe("other");
    expect(scriptLanguage("12345 !!!")).toBe("other");
    expect(keywordCategory("Police arrest three after bank robbery")).toBe("crime");
    expect(keywordCategory("পুঁজিবাজারে সূচক বেড়েছে")).toBe("markets");
    expect(keywordCategory("AI chip maker unveils new smartphone")).toBe("technology");
    expect(keywordCategory("Aid convoy reaches the town")).toBeNull(); // "ai" is a whole word only
    expect(namesIn("Bangladesh Bank holds rates; Bangladesh exports rise")).toEqual([
      { text: "Bangladesh Bank", type: "organization" },
      { text: "Bangladesh", type: "place" },
    ]);
    expect(namesIn("সিলেটের বন্যায় লেনদেন বন্ধ")).toEqual([{ text: "সিলেট", type: "place" }]);
  });

  it("asks for the API key when it has one", async () => {
    const body = { model: "m", messages: messagesFor({ title: "x" }) };
    const refused = await chat(body, keyed);
    expect(refused.status).toBe(401);
    expect(refused.json.error).toMatchObject({ type: "invalid_request_error" });
    const ok = await chat(body, keyed, { headers: { authorization: "Bearer sk-chat" } });
    expect(ok.status).toBe(200);
  });

  it("refuses a bad request as OpenAI does: 400, 405, 413", async () => {
    const notJson = await chat("{not json");
    expect(notJson.status).toBe(400);
    expect(notJson.json.error).toMatchObject({
      type: "invalid_request_error",
      message: expect.stringMatching(/^bad request/),
    });
    expect((await chat({ model: "m" })).status).toBe(400);
    expect((await chat({ model: "m", messages: [] })).status).toBe(400);
    expect((await chat({ messages: messagesFor("x") })).status).toBe(400);
    const streamed = await chat({ model: "m", messages: messagesFor("x"), stream: true });
    expect(streamed.json.error.message).toMatch(/stream/);
    expect((await fetch(`${sim.url}/v1/chat/completions`)).status).toBe(405);

    const big = JSON.stringify({ model: "m", messages: messagesFor("x".repeat(2 * 1024 * 1024)) });
    const tooBig = await chat(big);
    expect(tooBig.status).toBe(413);
    expect(tooBig.json.error.type).toBe("invalid_request_error");
    // Streamed without a length, the cap holds as well.
    const chunked = await fetch(`${sim.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: new Blob([big]).stream(),
      duplex: "half",
    } as RequestInit);
    expect(chunked.status).toBe(413);
    await chunked.body?.cancel();
  });

  it("answers 429 with Retry-After for the next N requests, then extractions again", async () => {
    sim.control.inject("llm", { kind: "429", retryAfter: 3, calls: 2 });
    const listed = await (await fetch(`${sim.url}/_control/faults`)).json();
    expect(listed).toEqual({
      faults: [{ sourceId: "llm", faults: [{ kind: "429", retryAfter: 3, calls: 2 }] }],
    });
    const before = sim.chat.stats.byFault["429"] ?? 0;
    for (const left of [1, 0]) {
      const r = await ask({ title: "x" });
      expect(r.status).toBe(429);
      expect(r.headers.get("retry-after")).toBe("3");
      expect(r.json.error.type).toBe("rate_limit_error");
      expect(sim.control.faults().length).toBe(left);
    }
    expect((await ask({ title: "x" })).status).toBe(200);
    expect(sim.chat.stats.byFault["429"]).toBe(before + 2);
  });

  it("keeps a fault without `calls` until it is cleared: 500, 503", async () => {
    sim.control.inject("llm", { kind: "500" });
    expect((await ask({ title: "x" })).status).toBe(500);
    expect((await ask({ title: "x" })).json.error.type).toBe("server_error");
    sim.control.clear("llm", "500");
    expect((await ask({ title: "x" })).status).toBe(200);
    const res = await fetch(`${sim.url}/_control/faults/llm`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ kind: "503" }),
    });
    expect(res.status).toBe(200);
    expect((await ask({ title: "x" })).status).toBe(503);
    expect((await ask({ title: "x" })).status).toBe(503);
    await fetch(`${sim.url}/_control/faults/llm?kind=503`, { method: "DELETE" });
    expect((await ask({ title: "x" })).status).toBe(200);
  });

  it("answers late under latency, never under blackhole, and resets under reset", async () => {
    sim.control.inject("llm", { kind: "latency", ms: 300, calls: 1 });
    const started = performance.now();
    expect((await ask({ title: "x" })).status).toBe(200);
    expect(performance.now() - started).toBeGreaterThanOrEqual(290);

    sim.control.inject("llm", { kind: "blackhole", calls: 1 });
    const hung = await chat({ model: "m", messages: messagesFor("x") }, sim, {
      signal: AbortSignal.timeout(300),
    }).catch((e: unknown) => e);
    expect((hung as Error).name).toBe("TimeoutError");

    sim.control.inject("llm", { kind: "reset", calls: 1 });
    const reset = await ask({ title: "x" }).catch((e: unknown) => e);
    expect(((reset as Error).cause as NodeJS.ErrnoException).code).toBe("ECONNRESET");
    expect((await ask({ title: "x" })).status).toBe(200);
    expect(sim.chat.stats.byFault).toMatchObject({ latency: 1, blackhole: 1, reset: 1 });
  });

  it("answers five kinds of malformed answer in turn, none of them a valid extraction", async () => {
    const item = { title: "Gold and oil prices rise" };
    const valid = (await ask(item)).json.choices[0].message.content as string;
    const { answered, byFault } = structuredClone(sim.chat.stats);
    sim.control.inject("llm", { kind: "malformed", calls: 5 });

    const cut = await ask(item);
    expect(cut.status).toBe(200);
    expect(cut.json.choices[0].message.content).toBe(valid.slice(0, Math.floor(valid.length / 2)));
    expect(contentOf(cut)).toBeUndefined();

    const prose = await ask(item);
    expect(prose.json.choices[0].message.content).toMatch(/^Sure! This story is about commodities/);
    expect(contentOf(prose)).toBeUndefined();

    const empty = await ask(item);
    expect(empty.json.choices[0].message.content).toBe("");
    expect(empty.json.usage.completion_tokens).toBe(0);

    const notChat = await ask(item);
    expect(notChat.json.choices).toBeUndefined();
    expect(notChat.json.output).toBe(valid);

    const notJson = await ask(item);
    expect(notJson.status).toBe(200);
    expect(notJson.json).toBeUndefined();
    expect(notJson.text.startsWith('{"id":"chatcmpl-')).toBe(true);

    expect(sim.control.faults()).toEqual([]);
    expect(contentOf(await ask(item))).toEqual(JSON.parse(valid));
    expect(sim.chat.stats.answered).toBe(answered + 1);
    expect(sim.chat.stats.byFault.malformed).toBe((byFault.malformed ?? 0) + 5);
  });

  it("answers JSON that violates the schema five ways in turn under schema", async () => {
    sim.control.inject("llm", { kind: "schema" });
    const item = { title: "Sylhet floods cut off 40 villages" };
    const answers = [];
    for (let i = 0; i < 5; i++) {
      const r = await ask(item);
      expect(r.status).toBe(200);
      answers.push(contentOf(r) as Record<string, unknown>);
    }
    for (const a of answers) {
      expect(a).toBeTypeOf("object");
      expect(contractErrors(a)).not.toEqual([]);
      expect(validateExtraction(a)).toMatchObject({ ok: false, errors: [expect.any(String)] });
    }
    expect(answers.map((a) => [a.language, a.category, a.entities])).toEqual([
      ["fr", "weather", [{ text: "Sylhet", type: "place" }]],
      ["en", "gossip", [{ text: "Sylhet", type: "place" }]],
      ["en", "weather", "Sylhet"],
      ["en", "weather", [{ text: "Sylhet", type: "place" }]],
      [undefined, "weather", [{ text: "Sylhet", type: "place" }]],
    ]);
    expect(String(answers[3]?.summary)).toHaveLength(2_000);
    expect(answers[4]).not.toHaveProperty("language");
    // Still in force: no `calls`, so it stays until cleared; then valid answers again.
    const again = contentOf(await ask(item));
    expect(contractErrors(again)).toEqual(["language"]);
    expect(validateExtraction(again).ok).toBe(false);
    expect(sim.control.faults()).toEqual([{ sourceId: "llm", faults: [{ kind: "schema" }] }]);
    sim.control.clear("llm", "schema");
    expectValid(contentOf(await ask(item)));
  });

  it("takes the chat faults only on llm, and refuses the feeds' and embeddings' own", () => {
    expect(() => sim.control.inject("ledger-rss", { kind: "schema" })).toThrow(
      /"schema" applies to the chat endpoint \(llm\); ledger-rss is a feed/,
    );
    expect(() => sim.control.inject("embeddings", { kind: "schema" })).toThrow(
      /embeddings is the embeddings endpoint/,
    );
    expect(() => sim.control.inject("llm", { kind: "wrong-dims" })).toThrow(
      /applies to the embeddings endpoint; llm is the chat endpoint/,
    );
    expect(() => sim.control.inject("llm", { kind: "stall" })).toThrow(/applies to streams/);
    expect(() => sim.control.inject("llm", { kind: "no-validators" })).toThrow(/feeds/);
    expect(() => sim.control.inject("llm", { kind: "429", calls: 0 })).toThrow(/calls/);
    expect(sim.control.inject("llm", { kind: "malformed", calls: 3 })).toEqual({
      kind: "malformed",
      calls: 3,
    });
  });

  it("is driven from a shell: sim fault llm malformed|schema|429|500|503|slow, sim clear llm", async () => {
    const root = path.resolve(import.meta.dirname, "..");
    const cli = (...args: string[]) =>
      promisify(execFile)(
        process.execPath,
        ["--import", "tsx", "cli/index.ts", "sim", ...args, "--url", sim.url],
        { cwd: root, env: { ...process.env, LOG_LEVEL: "silent" } },
      ).then((r) => r.stdout.trim());

    const outputs = await Promise.all([
      cli("fault", "llm", "malformed", "--calls", "2"),
      cli("fault", "llm", "schema"),
      cli("fault", "llm", "429", "7"),
      cli("fault", "llm", "500", "--calls", "1"),
      cli("fault", "llm", "503"),
      cli("fault", "llm", "slow"),
    ]);
    expect(outputs).toEqual([
      "llm: malformed for the next 2 request(s)",
      "llm: schema",
      "llm: 429 (Retry-After 7 s)",
      "llm: 500 for the next 1 request(s)",
      "llm: 503",
      "llm: latency 5000 ms",
    ]);
    const kinds = sim.control
      .faults()[0]
      ?.faults.map((f) => f.kind)
      .sort();
    expect(kinds).toEqual(["429", "500", "503", "latency", "malformed", "schema"]);

    expect(await cli("clear", "llm", "slow")).toBe("llm: cleared 1 fault(s)");
    expect(await cli("fault", "llm", "slow", "250", "--calls", "3")).toBe(
      "llm: latency 250 ms for the next 3 request(s)",
    );
    expect(sim.control.faults()[0]?.faults).toContainEqual({ kind: "latency", ms: 250, calls: 3 });
    expect(await cli("clear", "llm")).toBe("llm: cleared 6 fault(s)");
    expect(sim.control.faults()).toEqual([]);
  });
});
