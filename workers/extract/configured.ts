import type { Database } from "@/lib/db";
import { DatabaseCallLedger } from "@/lib/embed/ledger";
import { configuredExtractor } from "@/lib/extract";
import type { Extractor } from "@/lib/extract/types";
import { logger } from "@/lib/logger";
import type { ExtractLineOptions } from "./line";

export interface ConfiguredExtraction {
  options: ExtractLineOptions;
  extractor: Extractor;
  /** Closes the chain's providers, then writes what the ledger still holds. */
  close(): Promise<void>;
}

/**
 * The extraction chain as the settings say (WIREWATCH_EXTRACT_PROVIDERS and friends, lib/extract),
 * every attempt in the cost ledger. `simulator`: the built-in simulator's chat server, when it runs
 * in this process (the embedded default with nothing configured) and no WIREWATCH_EXTRACT_LLM_URL
 * is set: the llm provider asks it (model sim-extract-1, priced like a small commercial model), so
 * the chain is llm → local and a newcomer sees costs on the dashboard. Null, said loudly, when the
 * chain cannot be built: ingestion goes on and nothing is extracted.
 */
export function configuredExtraction(
  db: Database,
  simulator?: { url: string; model: string },
): ConfiguredExtraction | null {
  const log = logger().child({ part: "extract" });
  const ledger = new DatabaseCallLedger(db);
  let extractor: Extractor;
  try {
    extractor = configuredExtractor({
      db,
      ledger,
      ...(simulator ? { llmUrl: simulator.url, llmModel: simulator.model } : {}),
    });
  } catch (err) {
    log.error({ err }, "the extraction chain cannot be built: items are not extracted");
    void ledger.close();
    return null;
  }
  return {
    extractor,
    options: { extractor },
    close: async () => {
      await extractor.close();
      await ledger.close();
    },
  };
}
