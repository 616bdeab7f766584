import type { Database } from "@/lib/db";
import { DatabaseCallLedger } from "@/lib/embed/ledger";
import { LEXICAL_MODEL, LexicalEmbedder } from "@/lib/embed/lexical";
import { configuredEmbedder } from "@/lib/embed/registry";
import { SHIPPED_MODEL, ShippedEmbedder } from "@/lib/embed/shipped";
import type { Embedder } from "@/lib/embed/types";
import type { SearchModel } from "./hybrid";

/**
 * The embedders a process embeds search queries with, one per model id, made on first use and
 * kept (the shipped model loads once per process, ~0.3 s, in its worker thread; a query is then
 * ~15 ms). A process can embed with the models in the box (the shipped one and the lexical
 * fallback, at the versions it ships) and with the operator's configured model
 * (WIREWATCH_EMBEDDING_MODEL: an onnx directory, an http server; its calls go to the cost
 * ledger like the embed stage's). A stored model it cannot make (configured elsewhere, or
 * before) gets null: the search says it is keyword only, and why.
 */

interface Held {
  embedders: Map<string, Embedder>;
  /** The configured model's embedder, once tried (null: it cannot be built here). */
  configured?: Embedder | null;
  ledger?: DatabaseCallLedger;
}

const globalForEmbedders = globalThis as unknown as { wirewatchQueryEmbedders?: Held };

const BUILT_IN = new Map<string, () => Embedder>([
  [SHIPPED_MODEL.model, () => new ShippedEmbedder()],
  [LEXICAL_MODEL.model, () => new LexicalEmbedder()],
]);

export function queryEmbedderFor(
  model: Pick<SearchModel, "model">,
  db?: Database,
): Embedder | null {
  globalForEmbedders.wirewatchQueryEmbedders ??= { embedders: new Map() };
  const held = globalForEmbedders.wirewatchQueryEmbedders;
  const kept = held.embedders.get(model.model);
  if (kept) return kept;
  const make = BUILT_IN.get(model.model);
  if (make) {
    const embedder = make();
    held.embedders.set(model.model, embedder);
    return embedder;
  }
  if (held.configured === undefined) {
    try {
      if (db) held.ledger = new DatabaseCallLedger(db);
      held.configured = configuredEmbedder(held.ledger ? { ledger: held.ledger } : {});
    } catch {
      // Not buildable here (a package or directory missing): the search says keyword only.
      held.configured = null;
    }
  }
  if (held.configured && held.configured.info.model === model.model) {
    held.embedders.set(model.model, held.configured);
    return held.configured;
  }
  return null;
}

/** Closes the process's query embedders and flushes their ledger (a CLI command's end). */
export async function closeQueryEmbedders(): Promise<void> {
  const held = globalForEmbedders.wirewatchQueryEmbedders;
  if (!held) return;
  globalForEmbedders.wirewatchQueryEmbedders = undefined;
  const all = new Set([...held.embedders.values(), ...(held.configured ? [held.configured] : [])]);
  await Promise.all([...all].map((e) => e.close()));
  await held.ledger?.close();
}
