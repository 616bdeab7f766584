import type { Database } from "@/lib/db";

/**
 * Rows for the Meaning page's reads (lib/dashboard/meaning.ts), as the embed stage, its backfill
 * and the cost ledger leave them: three models (a complete meaning model, the lexical fallback
 * completed after it, a cross-lingual model half-way through its backfill), their vectors, and
 * supplier calls inside and outside the windows, one supplier's only ever failing.
 */
export const MEANING_SEED = {
  use: "shipped:use-lite@0.2.0",
  lexical: "lexical:char3-hash-512@1",
  e5: "onnx:multilingual-e5-small@abc123",
  /** Calls that never stored anything: no embedding_models row. */
  failing: "http:text-embedding-3-small@api.example",
  /** Live items decided unique or review: the canonical count. */
  canonical: 5,
  /** Per model: vectors stored, canonical items covered at their current version. */
  counts: {
    use: { embedded: 6, covered: 5 },
    lexical: { embedded: 5, covered: 5 },
    // Three current vectors in the last hour, one of item 3's older version 70 minutes ago.
    e5: { embedded: 4, covered: 3 },
  },
  e5Calls: { calls: 3, errors: 1, costUsd: 0.003, tokens: 330 },
  e5Error: "HTTP 503 from onnx worker: overloaded",
  failingCalls: { calls: 2, errors: 2, costUsd: 0, tokens: 0 },
} as const;

const ago = (now: Date, minutes: number) => new Date(now.getTime() - minutes * 60_000);
const key = (i: number) => i.toString(16).padStart(64, "0");

export async function seedMeaningRows(db: Database, now = new Date()): Promise<void> {
  const p = db.prisma;
  // Items 1-5 canonical (unique or review), 6 a duplicate, 7 removed; item 3 is at version 2.
  const items: [number, string, boolean, number][] = [
    [1, "unique", true, 1],
    [2, "unique", true, 1],
    [3, "unique", true, 2],
    [4, "review", true, 1],
    [5, "unique", true, 1],
    [6, "duplicate", true, 1],
    [7, "removed", false, 1],
  ];
  for (const [i, outcome, live, version] of items) {
    await p.$executeRaw`
      INSERT INTO dedup_items (entry_key, version, source_id, first_seen_at, live, outcome,
                               decided_at, decision_ms)
      VALUES (${key(i)}, ${version}, 'wire', ${ago(now, 200)}, ${live}, ${outcome},
              ${ago(now, 190)}, 1.0)`;
  }
  await p.$executeRaw`
    INSERT INTO embedding_models (id, model, provider, name, version, dims, kind, languages,
                                  cross_lingual, meaning_threshold, distinct_threshold, state,
                                  backfill_started_at, backfill_completed_at, created_at)
    VALUES
      (1, ${MEANING_SEED.use}, 'shipped', 'use-lite', '0.2.0', 2, 'meaning', ARRAY['en'], false,
       0.82, 0.55, 'complete', ${ago(now, 180)}, ${ago(now, 150)}, ${ago(now, 180)}),
      (2, ${MEANING_SEED.lexical}, 'lexical', 'char3-hash-512', '1', 2, 'lexical',
       ARRAY['en', 'bn'], false, NULL, NULL, 'complete', ${ago(now, 170)}, ${ago(now, 100)},
       ${ago(now, 170)}),
      (3, ${MEANING_SEED.e5}, 'onnx', 'multilingual-e5-small', 'abc123', 2, 'meaning',
       ARRAY['en', 'bn'], true, 0.9, 0.7, 'backfilling', ${ago(now, 90)}, NULL, ${ago(now, 90)})`;
  // The id sequence moves past the ids given, as registering a model would have left it.
  await p.$executeRaw`SELECT setval('embedding_models_id_seq', 3)`;

  const vectors: [model: number, item: number, version: number, minutes: number][] = [
    // use-lite: every canonical item, and the duplicate's vector from before it was linked.
    [1, 1, 1, 170],
    [1, 2, 1, 170],
    [1, 3, 2, 120],
    [1, 4, 1, 170],
    [1, 5, 1, 170],
    [1, 6, 1, 170],
    // the lexical fallback: every canonical item.
    [2, 1, 1, 160],
    [2, 2, 1, 160],
    [2, 3, 2, 120],
    [2, 4, 1, 160],
    [2, 5, 1, 160],
    // e5: items 1, 2 and 4 in the last hour (2, 2 and 31 minutes ago), item 3 at its old
    // version 70 minutes ago, outside the hour.
    [3, 1, 1, 2],
    [3, 2, 1, 2],
    [3, 4, 1, 31],
    [3, 3, 1, 70],
  ];
  for (const [model, item, version, minutes] of vectors) {
    await p.$executeRaw`
      INSERT INTO item_vectors (model_id, entry_key, item_version, embedding, code, lang,
                                source_id, first_seen_at, created_at)
      VALUES (${model}, ${key(item)}, ${version}, ARRAY[0.6, 0.8]::real[], B'11', 'en', 'wire',
              ${ago(now, 200)}, ${ago(now, minutes)})`;
  }

  const calls: [
    model: string,
    provider: string,
    purpose: string,
    ok: boolean,
    minutes: number,
    cost: number,
    tokens: number,
    error: string | null,
    status: number | null,
  ][] = [
    // e5 in the day: two answers and one failure; a cheaper failure 2 days ago does not count
    // in the day, and is not the last error either (the day's is newer).
    [MEANING_SEED.e5, "onnx", "embed", true, 5, 0.001, 110, null, null],
    [MEANING_SEED.e5, "onnx", "embed", true, 10, 0.001, 110, null, null],
    [MEANING_SEED.e5, "onnx", "embed", false, 60, 0.001, 110, MEANING_SEED.e5Error, 503],
    [MEANING_SEED.e5, "onnx", "embed", false, 2 * 1440, 0.5, 9999, "older failure", 500],
    // use-lite: only a failure 3 days ago (the last error, no calls in the day) and one 8 days
    // ago, outside the week.
    [MEANING_SEED.use, "shipped", "embed", false, 3 * 1440, 0, 0, "worker crashed", null],
    [MEANING_SEED.use, "shipped", "embed", false, 8 * 1440, 0, 0, "too old to show", null],
    // A supplier that never answered: no model row, still shown.
    [MEANING_SEED.failing, "http", "embed", false, 3, 0, 0, "HTTP 429 rate limited", 429],
    [MEANING_SEED.failing, "http", "embed", false, 4, 0, 0, "HTTP 429 rate limited", 429],
    // Extraction calls are not embeddings: not on this page.
    ["http:gpt-4o-mini@api.example", "http", "extract", false, 3, 0.2, 500, "boom", 500],
  ];
  for (const [model, provider, purpose, ok, minutes, cost, tokens, error, status] of calls) {
    await p.$executeRaw`
      INSERT INTO provider_calls (at, purpose, provider, model, ok, status, error, items,
                                  input_tokens, output_tokens, cost_usd, latency_ms)
      VALUES (${ago(now, minutes)}, ${purpose}, ${provider}, ${model}, ${ok}, ${status}, ${error},
              8, ${Math.max(0, tokens - 10)}, ${Math.min(10, tokens)}, ${cost}, 40)`;
  }
}
