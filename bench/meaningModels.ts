/**
 * The models `bench meaning` and `bench msrp` embed with, by id, and embedding a corpus's texts
 * once per model.
 */
import { configuredEmbedder, type Embedder, EmbeddingError, type ModelInfo } from "@/lib/embed";

/** Texts per embed call: well under lib/embed's 2,048, and progress to show between calls. */
const CHUNK = 256;

/**
 * The embedder for a model id: whatever lib/embed's registry takes ("shipped", "lexical",
 * "onnx:<directory>", "http:<name>" with WIREWATCH_EMBEDDING_URL and _DIMS, or a printed id). A
 * model that cannot be built is the caller's mistake here: say why, with no stack trace.
 */
export function openEmbedder(id: string): Embedder {
  try {
    return configuredEmbedder({ model: id });
  } catch (err) {
    if (!(err instanceof EmbeddingError)) throw err;
    const usage = new Error(`model ${id}: ${err.message}`);
    usage.name = "UsageError";
    throw usage;
  }
}

export interface Embedded {
  model: ModelInfo;
  vectors: Map<string, Float32Array>;
  seconds: number;
}

/**
 * Every distinct text's vector by one model, then the embedder closed. A batch answered by
 * another model (a failover to its fallback) stops the run: vectors of two models are never
 * compared.
 */
export async function embedAll(
  id: string,
  texts: Iterable<string>,
  tag: string,
): Promise<Embedded> {
  const embedder = openEmbedder(id);
  try {
    const distinct = [...new Set(texts)];
    const vectors = new Map<string, Float32Array>();
    const started = performance.now();
    let model: ModelInfo | undefined;
    for (let i = 0; i < distinct.length; i += CHUNK) {
      const chunk = distinct.slice(i, i + CHUNK);
      const batch = await embedder.embed(chunk, { purpose: "passage" });
      if (model && batch.model.model !== model.model) {
        throw new Error(
          `${embedder.info.model}: a batch came back from ${batch.model.model} (a failover?) ` +
            `after ${model.model}: vectors of two models cannot be compared`,
        );
      }
      model = batch.model;
      chunk.forEach((t, j) => {
        vectors.set(t, batch.vectors[j] as Float32Array);
      });
      if ((i / CHUNK) % 8 === 7) {
        console.error(`${tag}: ${model.model} ${vectors.size} / ${distinct.length} texts`);
      }
    }
    return {
      model: model ?? embedder.info,
      vectors,
      seconds: (performance.now() - started) / 1000,
    };
  } finally {
    await embedder.close();
  }
}

/** The vector of a text embedAll was given; anything else is the caller's mistake. */
export function vectorLookup(e: Embedded): (text: string) => Float32Array {
  return (t) => {
    const v = e.vectors.get(t);
    if (!v) throw new Error(`no ${e.model.model} vector for a text (${t.slice(0, 40)}…)`);
    return v;
  };
}
