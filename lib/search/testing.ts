import type { Database } from "@/lib/db";
import type { ModelInfo } from "@/lib/embed/types";
import { Random } from "@/simulator/random";

/** Test and benchmark helpers for lib/search: models as rows, and seeded unit vectors. */

/** Registers a model as the embed stage would, in the state asked; returns its id. */
export async function insertModel(
  db: Database,
  info: Pick<ModelInfo, "model" | "dims" | "kind"> & Partial<ModelInfo>,
  state: "backfilling" | "complete" | "retired" = "complete",
  completedAt: Date | null = state === "complete" ? new Date() : null,
): Promise<number> {
  const [provider = "lexical", rest = info.model] = info.model.split(":");
  const [name = rest, version = "1"] = rest.split("@");
  const rows = await db.prisma.$queryRaw<{ id: number }[]>`
    INSERT INTO embedding_models (model, provider, name, version, dims, kind, languages,
                                  cross_lingual, state, backfill_started_at,
                                  backfill_completed_at)
    VALUES (${info.model}, ${info.provider ?? provider}, ${info.name ?? name},
            ${info.version ?? version}, ${info.dims}, ${info.kind},
            ${info.languages ?? ["en"]}::text[], ${info.crossLingual ?? false}, ${state}, now(),
            ${completedAt})
    RETURNING id`;
  return rows[0]?.id as number;
}

/** A seeded random unit vector. */
export function randomUnit(r: Random, dims: number): Float32Array {
  const v = new Float32Array(dims);
  let sum = 0;
  for (let i = 0; i < dims; i++) {
    // The sum of three uniforms: close enough to a normal for directions spread over the sphere.
    const x = r.next() + r.next() + r.next() - 1.5;
    v[i] = x;
    sum += x * x;
  }
  const n = Math.sqrt(sum);
  for (let i = 0; i < dims; i++) v[i] = (v[i] as number) / n;
  return v;
}

/** `base` moved by `noise` (0: itself; 1: about as far again as its own length), unit length. */
export function near(r: Random, base: Float32Array, noise: number): Float32Array {
  const offset = randomUnit(r, base.length);
  const v = new Float32Array(base.length);
  let sum = 0;
  for (let i = 0; i < base.length; i++) {
    const x = (base[i] as number) + noise * (offset[i] as number);
    v[i] = x;
    sum += x * x;
  }
  const n = Math.sqrt(sum);
  for (let i = 0; i < base.length; i++) v[i] = (v[i] as number) / n;
  return v;
}

/** Exact cosine nearest neighbours in memory: what the stored paths are checked against. */
export function bruteForce(
  rows: readonly { entryKey: string; vector: Float32Array }[],
  q: Float32Array,
  k: number,
): { entryKey: string; similarity: number }[] {
  return rows
    .map((r) => {
      let dot = 0;
      for (let i = 0; i < q.length; i++) dot += (q[i] as number) * (r.vector[i] as number);
      return { entryKey: r.entryKey, similarity: dot };
    })
    .sort((a, b) => b.similarity - a.similarity || (a.entryKey < b.entryKey ? -1 : 1))
    .slice(0, k);
}

export { Random };
