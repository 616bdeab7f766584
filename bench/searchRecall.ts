/**
 * The vector paths' recall on real embeddings (`bench search --real-vectors`): the synthetic
 * corpus's vectors are iid noise around centroids, whose sign bits rank better than a real
 * model's (real embeddings share signs in many dimensions), so the portable path's Hamming pass
 * is checked here on sentences embedded by the shipped model and by the lexical fallback.
 *
 * The MSRP sentences (../shared/corpora/msrp): the first sentence of each of the first Q pairs
 * is a query; every other sentence of the corpus (both sides of the other pairs, the second of
 * the query pairs) is stored, ~7,700 vectors. For each query, the exact top 10 by cosine (brute
 * force) against what nearest() returns with k = 10: the portable path at several candidate
 * counts, and pgvector's HNSW index where the database has it.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import type { Database } from "@/lib/db";
import { LexicalEmbedder } from "@/lib/embed/lexical";
import { ShippedEmbedder } from "@/lib/embed/shipped";
import type { Embedder } from "@/lib/embed/types";
import { bruteForce, insertModel } from "@/lib/search/testing";
import { ensureModelIndex, nearest, storeVectors, vectorBackendStatus } from "@/lib/search/vectors";

export const CANDIDATES = [25, 50, 100, 200];

export interface RealRecall {
  model: string;
  stored: number;
  queries: number;
  /** Recall@10 of the portable path by Hamming candidates kept. */
  portable: Record<string, number>;
  /** Recall@10 of HNSW (ef_search 100), or null without pgvector. */
  pgvector: number | null;
  embedSeconds: number;
}

function sentences(queries: number): { queries: string[]; stored: string[] } {
  const file = path.resolve(
    import.meta.dirname,
    "../../shared/corpora/msrp/msr_paraphrase_train.txt",
  );
  const pairs = readFileSync(file, "utf8")
    .split("\n")
    .slice(1)
    .map((l) => l.split("\t"))
    .filter((c) => c[3] && c[4])
    .map((c) => [(c[3] as string).trim(), (c[4] as string).trim()] as const);
  const q = pairs.slice(0, queries).map((p) => p[0]);
  const asked = new Set(q);
  const stored = new Set<string>();
  for (const [i, [a, b]] of pairs.entries()) {
    if (i >= queries && !asked.has(a)) stored.add(a);
    if (!asked.has(b)) stored.add(b);
  }
  return { queries: q, stored: [...stored] };
}

async function embedAll(embedder: Embedder, texts: string[], purpose: "query" | "passage") {
  const out: Float32Array[] = [];
  for (let i = 0; i < texts.length; i += 32) {
    out.push(...(await embedder.embed(texts.slice(i, i + 32), { purpose })).vectors);
  }
  return out;
}

export async function realRecall(
  db: Database,
  queryCount: number,
  log: (msg: string) => void,
  models: ("lexical" | "shipped")[] = ["lexical", "shipped"],
): Promise<RealRecall[]> {
  const { queries, stored } = sentences(queryCount);
  const status = await vectorBackendStatus(db);
  const results: RealRecall[] = [];
  const shipped = new ShippedEmbedder();
  try {
    const embedders = models.map((m) => (m === "shipped" ? shipped : new LexicalEmbedder()));
    for (const embedder of embedders as Embedder[]) {
      const t0 = performance.now();
      log(`  real vectors: embedding ${stored.length} MSRP sentences by ${embedder.info.model}`);
      const vectors = await embedAll(embedder, stored, "passage");
      const asked = await embedAll(embedder, queries, "query");
      const embedSeconds = (performance.now() - t0) / 1000;
      const modelId = await insertModel(db, embedder.info, "complete");
      const rows = stored.map((_, i) => ({
        modelId,
        entryKey: `m${i}`,
        itemVersion: 1,
        vector: vectors[i] as Float32Array,
        lang: "en",
        sourceId: "msrp",
        firstSeenAt: new Date(),
      }));
      for (let i = 0; i < rows.length; i += 1_000) await storeVectors(db, rows.slice(i, i + 1_000));
      if (status.backend === "pgvector") await ensureModelIndex(db, modelId, embedder.info.dims);
      const exact = asked.map((q) => new Set(bruteForce(rows, q, 10).map((h) => h.entryKey)));
      const recall = async (options: { backend: "portable" | "pgvector"; candidates?: number }) => {
        let found = 0;
        for (const [i, q] of asked.entries()) {
          const hits = await nearest(db, {
            modelId,
            dims: embedder.info.dims,
            vector: q,
            k: 10,
            ...options,
          });
          found += hits.filter((h) => exact[i]?.has(h.entryKey)).length;
        }
        return Math.round((found / (10 * asked.length)) * 10_000) / 10_000;
      };
      const portable: Record<string, number> = {};
      for (const c of CANDIDATES)
        portable[c] = await recall({ backend: "portable", candidates: c });
      const pgvector = status.backend === "pgvector" ? await recall({ backend: "pgvector" }) : null;
      results.push({
        model: embedder.info.model,
        stored: stored.length,
        queries: asked.length,
        portable,
        pgvector,
        embedSeconds: Math.round(embedSeconds * 10) / 10,
      });
      log(
        `  real vectors, ${embedder.info.model}: portable recall@10 ${CANDIDATES.map((c) => `${c}: ${portable[c]}`).join(", ")}; pgvector ${pgvector ?? "–"}`,
      );
    }
  } finally {
    await shipped.close();
  }
  return results;
}
