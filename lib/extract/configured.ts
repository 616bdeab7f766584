import { config } from "../config";
import type { Database } from "../db";
import { DatabaseCallLedger, MemoryCallLedger } from "../embed/ledger";
import type { CallLedger } from "../embed/types";
import { createExtractor } from "./chain";
import { LocalProvider } from "./providers/local";
import { OpenAICompatibleProvider } from "./providers/openaiCompatible";
import type { ExtractionProvider, Extractor } from "./types";

/**
 * The chain the settings describe: WIREWATCH_EXTRACT_PROVIDERS in its order; unset, "llm,local"
 * when there is a chat server (WIREWATCH_EXTRACT_LLM_URL, or `llmUrl`: the embedded default's
 * simulator), else "local". The llm provider's budget is WIREWATCH_EXTRACT_LLM_DAILY_BUDGET_USD,
 * counted from provider_calls when `db` is given, else in this process's memory.
 */
export interface ConfiguredExtractorOptions {
  /** The budget reads today's spend here; the default ledger writes here. */
  db?: Database;
  /** Where attempts are recorded (default: a DatabaseCallLedger on `db`, else in memory). */
  ledger?: CallLedger & { flush?: () => Promise<void> };
  /** Overrides WIREWATCH_EXTRACT_LLM_URL (the embedded default points it at the simulator). */
  llmUrl?: string;
  /** Overrides WIREWATCH_EXTRACT_LLM_MODEL (the simulator's model is sim-extract-1). */
  llmModel?: string;
}

export function configuredProviderNames(llmUrl?: string): ("local" | "llm")[] {
  const c = config();
  const url = llmUrl ?? c.WIREWATCH_EXTRACT_LLM_URL;
  if (c.WIREWATCH_EXTRACT_PROVIDERS) {
    return c.WIREWATCH_EXTRACT_PROVIDERS.split(",").map((p) => p.trim() as "local" | "llm");
  }
  return url ? ["llm", "local"] : ["local"];
}

export function configuredExtractor(options: ConfiguredExtractorOptions = {}): Extractor {
  const c = config();
  const url = options.llmUrl ?? c.WIREWATCH_EXTRACT_LLM_URL;
  const providers: ExtractionProvider[] = configuredProviderNames(options.llmUrl).map((name) => {
    if (name === "local") return new LocalProvider();
    if (!url) {
      throw new Error(
        "extract: WIREWATCH_EXTRACT_PROVIDERS names llm, but there is no chat server (WIREWATCH_EXTRACT_LLM_URL)",
      );
    }
    return new OpenAICompatibleProvider({
      baseUrl: url,
      model: options.llmModel ?? c.WIREWATCH_EXTRACT_LLM_MODEL,
      timeoutMs: c.WIREWATCH_EXTRACT_LLM_TIMEOUT_MS,
      ...(c.WIREWATCH_EXTRACT_LLM_API_KEY ? { apiKey: c.WIREWATCH_EXTRACT_LLM_API_KEY } : {}),
      ...(c.WIREWATCH_EXTRACT_LLM_RPM ? { requestsPerMinute: c.WIREWATCH_EXTRACT_LLM_RPM } : {}),
    });
  });
  const owned = options.ledger
    ? undefined
    : options.db
      ? new DatabaseCallLedger(options.db)
      : new MemoryCallLedger();
  const ledger = options.ledger ?? owned;
  const dailyUsd = c.WIREWATCH_EXTRACT_LLM_DAILY_BUDGET_USD;
  const extractor = createExtractor({
    providers,
    ...(ledger ? { ledger } : {}),
    ...(dailyUsd !== undefined
      ? { budget: { dailyUsd: { llm: dailyUsd }, ...(options.db ? { db: options.db } : {}) } }
      : {}),
  });
  return {
    ...extractor,
    async close() {
      await extractor.close();
      if (owned instanceof DatabaseCallLedger) await owned.close();
    },
  };
}
