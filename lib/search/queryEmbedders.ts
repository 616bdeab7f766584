import { LEXICAL_MODEL, LexicalEmbedder } from "@/lib/embed/lexical";
import { SHIPPED_MODEL, ShippedEmbedder } from "@/lib/embed/shipped";
import type { Embedder } from "@/lib/embed/types";
import type { SearchModel } from "./hybrid";

/**
 * The embedders a process embeds search queries with, one per model id, made on first use and
 * kept (the shipped model loads once per process, ~0.3 s, in its worker thread; a query is then
 * ~15 ms). This process can embed with the models that are in the box: the shipped one and the
 * lexical fallback, at the versions it ships. A stored model of another provider or version
 * (an operator's onnx or http model) gets null: the search says it is keyword only and why.
 */

const globalForEmbedders = globalThis as unknown as {
  wirewatchQueryEmbedders?: Map<string, Embedder>;
};

function makers(): Map<string, () => Embedder> {
  return new Map<string, () => Embedder>([
    [SHIPPED_MODEL.model, () => new ShippedEmbedder()],
    [LEXICAL_MODEL.model, () => new LexicalEmbedder()],
  ]);
}

export function queryEmbedderFor(model: Pick<SearchModel, "model">): Embedder | null {
  globalForEmbedders.wirewatchQueryEmbedders ??= new Map();
  const cache = globalForEmbedders.wirewatchQueryEmbedders;
  const held = cache.get(model.model);
  if (held) return held;
  const make = makers().get(model.model);
  if (!make) return null;
  const embedder = make();
  cache.set(model.model, embedder);
  return embedder;
}

/** Closes the process's query embedders (a CLI command before it exits). */
export async function closeQueryEmbedders(): Promise<void> {
  const cache = globalForEmbedders.wirewatchQueryEmbedders;
  if (!cache) return;
  globalForEmbedders.wirewatchQueryEmbedders = undefined;
  await Promise.all([...cache.values()].map((e) => e.close()));
}
