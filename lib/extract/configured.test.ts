import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { type Config, parseConfig } from "@/lib/config";
import { MemoryCallLedger } from "@/lib/embed/ledger";
import { createTestDatabase, type TestDatabase } from "@/lib/testing/db";
import { type Simulator, startSimulator } from "@/simulator/server";
import { configuredExtractor, configuredProviderNames } from "./configured";
import { PROMPT_VERSION } from "./providers/openaiCompatible";

// The chain the settings describe, each setting parsed as at start (parseConfig), the llm
// provider against the simulator over real HTTP.

let settings: Config = parseConfig({});
vi.mock("@/lib/config", async (real) => {
  const actual = await real<typeof import("@/lib/config")>();
  return { ...actual, config: () => settings };
});

let sim: Simulator;
let db: TestDatabase;
beforeAll(async () => {
  [sim, db] = await Promise.all([startSimulator({ manual: true }), createTestDatabase()]);
});
afterAll(async () => {
  await Promise.all([sim.stop(), db.drop()]);
});
afterEach(() => {
  settings = parseConfig({});
  sim.control.clearAll();
});

const set = (env: Record<string, string>) => {
  settings = parseConfig(env);
};

describe("configuredExtractor", () => {
  it("is the local provider alone with no chat server", () => {
    expect(configuredProviderNames()).toEqual(["local"]);
    expect(configuredExtractor().id).toBe("local:local-rules@1/local-v1");
  });

  it("puts llm first when a chat server is set or given (the embedded default's simulator)", () => {
    set({ WIREWATCH_EXTRACT_LLM_URL: "https://api.openai.com/v1" });
    expect(configuredExtractor().id).toBe(
      `llm:gpt-4o-mini/${PROMPT_VERSION}>local:local-rules@1/local-v1`,
    );
    settings = parseConfig({});
    const sim1 = configuredExtractor({ llmUrl: `${sim.url}/v1`, llmModel: "sim-extract-1" });
    expect(sim1.id).toBe(`llm:sim-extract-1/${PROMPT_VERSION}>local:local-rules@1/local-v1`);
  });

  it("takes WIREWATCH_EXTRACT_PROVIDERS' order as given", () => {
    set({
      WIREWATCH_EXTRACT_PROVIDERS: "local, llm",
      WIREWATCH_EXTRACT_LLM_URL: "http://127.0.0.1:1/v1",
    });
    expect(configuredExtractor().providers.map((p) => p.name)).toEqual(["local", "llm"]);
    set({
      WIREWATCH_EXTRACT_PROVIDERS: "local",
      WIREWATCH_EXTRACT_LLM_URL: "http://127.0.0.1:1/v1",
    });
    expect(configuredExtractor().id).toBe("local:local-rules@1/local-v1");
  });

  it("records to the database by default when given one, and counts the budget from it", async () => {
    set({ WIREWATCH_EXTRACT_LLM_DAILY_BUDGET_USD: "0.00005" });
    const extractor = configuredExtractor({
      db,
      llmUrl: `${sim.url}/v1`,
      llmModel: "sim-extract-1",
    });
    const subject = { entryKey: "cfg:1", itemVersion: 1, sourceId: "cfg" };
    const first = await extractor.extract({ title: "Rain in Dhaka" }, { subject });
    expect(first.provider).toBe("llm");
    const second = await extractor.extract({ title: "Rain in Sylhet" }, { subject });
    expect(second).toMatchObject({ provider: "local", fellOver: true });
    expect(second.attempts[0]).toMatchObject({
      provider: "llm",
      outcome: "budget_exhausted",
      costUsd: 0,
    });
    await extractor.close(); // flushes the ledger it made
    const rows = await db.prisma.providerCall.findMany({
      where: { entryKey: "cfg:1" },
      orderBy: { id: "asc" },
    });
    expect(rows.map((r) => [r.provider, r.outcome])).toEqual([
      ["llm", "ok"],
      ["llm", "budget_exhausted"],
      ["local", "ok"],
    ]);
  });

  it("records where it is told, and passes the API key and the model", async () => {
    const keyed = await startSimulator({ manual: true, chat: { apiKey: "k-1" } });
    try {
      set({ WIREWATCH_EXTRACT_LLM_API_KEY: "k-1", WIREWATCH_EXTRACT_LLM_MODEL: "sim-extract-1" });
      const ledger = new MemoryCallLedger();
      const result = await configuredExtractor({ ledger, llmUrl: `${keyed.url}/v1` }).extract({
        title: "Oil slips",
      });
      expect(result).toMatchObject({ provider: "llm", model: "sim-extract-1" });
      expect(ledger.calls).toHaveLength(1);
    } finally {
      await keyed.stop();
    }
  });
});
