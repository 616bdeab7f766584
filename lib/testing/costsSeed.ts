import type { Database } from "@/lib/db";

/**
 * Rows for the Costs page's reads (lib/dashboard/costs.ts), the item page's extraction and the
 * extraction metrics, as the extract stage and the chain's ledger leave them: three sources'
 * items decided by dedup, the extraction calls the chain made for the canonical ones (a correction
 * that worked, a 429 that fell over to the local provider, a schema violation twice that fell
 * over, a provider skipped at its budget), an embedding call beside them, calls 3, 8 and 40 days
 * back, and the stored extractions, one by an older chain and one of an older version.
 *
 * Rows of "today" are placed minutes before `now` but never before its UTC midnight, so the
 * day's figures hold whenever the seed runs.
 */
export const COSTS_SEED = {
  chain: "llm:sim-extract-1/extract-v1>local:local-rules@1/local-v1",
  oldChain: "llm:gpt-4o-mini/extract-v0>local:local-rules@1/local-v1",
  llmModel: "sim-extract-1",
  localModel: "local-rules@1",
  /** The daily budget the tests give the llm provider: today's spend is past it. */
  budgetUsd: 0.005,
  /** The llm provider's extraction spend today (the local one is free). */
  todayUsd: 0.0095,
  todayCalls: 11,
  /** Extraction spend of the 3- and 8-day-old calls (the 40-day-old one is outside every window). */
  threeDaysUsd: 0.01,
  eightDaysUsd: 0.05,
  embeddingUsd: 0.004,
  /** Per source over the last 24 hours. */
  day: {
    wire: {
      costUsd: 0.0045,
      attempts: 5,
      failed: 2,
      uniqueStories: 3,
      duplicates: 1,
      tokensIn: 3100,
      tokensOut: 530,
    },
    padma: { costUsd: 0.003, attempts: 2, failed: 0, uniqueStories: 1, duplicates: 2 },
    digest: { costUsd: 0.002, attempts: 3, failed: 2, uniqueStories: 1, duplicates: 2 },
  },
  /** Canonical items (live, unique or review), and those extracted by `chain` at their version. */
  canonical: 8,
  covered: 5,
} as const;

/** A readable 64-hex-digit entry key for a seed item ("w1" → 0…7731). */
export const costKey = (name: string) => Buffer.from(name).toString("hex").padStart(64, "0");

export async function seedCostRows(db: Database, now = new Date()): Promise<void> {
  const p = db.prisma;
  const midnight = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  // Today's rows: minutes back, but inside today (a few ms apart so their order is kept).
  const today = (minutes: number, ms = 0) =>
    new Date(Math.max(midnight + ms, now.getTime() - minutes * 60_000 + ms));
  const daysAgo = (days: number) => new Date(now.getTime() - days * 86_400_000);

  for (const [id, name] of [
    ["wire", "Wire"],
    ["padma", "Padma RSS"],
    ["digest", "Digest"],
    ["quiet", "Quiet"],
  ] as const) {
    await p.source.create({
      data: { id, name, kind: "feed", url: `http://example.test/${id}.xml` },
    });
  }

  // [name, source, outcome, version, first seen, duplicate of]
  const items: [string, string, string, number, Date, string | null][] = [
    ["w1", "wire", "unique", 1, today(50), null],
    ["w2", "wire", "unique", 1, today(40), null],
    ["w3", "wire", "review", 1, today(30), null],
    ["w4", "wire", "duplicate", 1, today(20), "p1"],
    ["p1", "padma", "unique", 2, today(45), null],
    ["p2", "padma", "duplicate", 1, today(35), "w1"],
    ["p3", "padma", "duplicate", 1, today(25), "w2"],
    ["g1", "digest", "duplicate", 1, today(15), "w1"],
    ["g2", "digest", "duplicate", 1, today(14), "p1"],
    ["g3", "digest", "unique", 1, today(13), null],
    ["w0", "wire", "unique", 1, daysAgo(3), null],
    // Edited since its extraction (v1): not covered until extracted again.
    ["w8", "wire", "unique", 2, daysAgo(8), null],
    ["wOld", "wire", "unique", 1, daysAgo(40), null],
    // Retracted: no story, whatever it cost.
    ["gone", "digest", "removed", 1, today(12), null],
  ];
  for (const [name, source, outcome, version, seen, dup] of items) {
    await p.$executeRaw`
      INSERT INTO news (entry_key, source_id, canonical_id, quality, title, version, first_seen_at,
                        first_source, first_collector, last_result, updated_at, duplicate_of,
                        dedup_stage)
      VALUES (${costKey(name)}, ${source}, ${`guid-${name}`}, 'authoritative',
              ${`Story ${name}`}, ${version}, ${seen}, ${source}, 'A', 'inserted', ${seen},
              ${dup === null ? null : costKey(dup)}, ${dup === null ? null : "near"})`;
    await p.$executeRaw`
      INSERT INTO dedup_items (entry_key, version, source_id, first_seen_at, live, outcome,
                               decided_at, decision_ms)
      VALUES (${costKey(name)}, ${version}, ${source}, ${seen}, ${outcome !== "removed"},
              ${outcome}, ${seen}, 1.0)`;
  }

  const L = COSTS_SEED.llmModel;
  const LOCAL = COSTS_SEED.localModel;
  // [at, purpose, provider, model, outcome, correction, cost, in, out, item, version, status]
  const calls: [
    Date,
    string,
    string,
    string,
    string,
    boolean,
    number,
    number,
    number,
    string | null,
    number,
    number | null,
  ][] = [
    [today(50), "extract", "llm", L, "ok", false, 0.002, 1000, 200, "w1", 1, 200],
    // Malformed, then the correction retry was valid.
    [today(40), "extract", "llm", L, "malformed", false, 0.001, 900, 150, "w2", 1, 200],
    [today(40, 5), "extract", "llm", L, "ok", true, 0.0015, 1200, 180, "w2", 1, 200],
    // 429: the local provider answered in the same job.
    [today(30), "extract", "llm", L, "rate_limited", false, 0, 0, 0, "w3", 1, 429],
    [today(30, 5), "extract", "local", LOCAL, "ok", false, 0, 0, 0, "w3", 1, null],
    [today(45), "extract", "llm", L, "ok", false, 0.003, 1500, 300, "p1", 1, 200],
    // Schema violated twice: fell over.
    [today(10), "extract", "llm", L, "schema_violation", false, 0.001, 800, 120, "g3", 1, 200],
    [today(10, 5), "extract", "llm", L, "schema_violation", true, 0.001, 900, 130, "g3", 1, 200],
    [today(10, 10), "extract", "local", LOCAL, "ok", false, 0, 0, 0, "g3", 1, null],
    // p1 edited (v2): the llm provider is past its budget, skipped; the local one answered.
    [today(5), "extract", "llm", L, "budget_exhausted", false, 0, 0, 0, "p1", 2, null],
    [today(5, 5), "extract", "local", LOCAL, "ok", false, 0, 0, 0, "p1", 2, null],
    [daysAgo(3), "extract", "llm", L, "ok", false, 0.01, 2000, 400, "w0", 1, 200],
    [daysAgo(8), "extract", "llm", L, "ok", false, 0.05, 9000, 900, "w8", 1, 200],
    [daysAgo(40), "extract", "llm", "gpt-4o-mini", "ok", false, 0.5, 9000, 900, "wOld", 1, 200],
    // An embedding batch: no item, not extraction's spend.
    [
      today(20),
      "embed",
      "http",
      "text-embedding-3-small",
      "ok",
      false,
      0.004,
      4000,
      0,
      null,
      0,
      200,
    ],
  ];
  const sourceOf = new Map(items.map(([name, source]) => [name, source]));
  for (const [
    at,
    purpose,
    provider,
    model,
    outcome,
    correction,
    cost,
    tin,
    tout,
    item,
    v,
    status,
  ] of calls) {
    const ok = outcome === "ok";
    await p.$executeRaw`
      INSERT INTO provider_calls (at, purpose, provider, model, ok, status, error, items,
                                  input_tokens, output_tokens, cost_usd, latency_ms,
                                  prompt_version, outcome, correction, entry_key, item_version,
                                  source_id)
      VALUES (${at}, ${purpose}, ${provider}, ${model}, ${ok}, ${status},
              ${ok ? null : `${outcome} in the seed`}, 1, ${tin}, ${tout}, ${cost}, 120,
              ${purpose === "extract" ? (provider === "llm" ? "extract-v1" : "local-v1") : null},
              ${purpose === "extract" ? outcome : null}, ${correction},
              ${item === null ? null : costKey(item)}, ${item === null ? null : v},
              ${item === null ? null : (sourceOf.get(item) ?? null)})`;
  }

  // [item, version, provider, model, extractor, fell over, calls, in, out, cost, at]
  const extractions: [
    string,
    number,
    string,
    string,
    string,
    boolean,
    number,
    number,
    number,
    number,
    Date,
  ][] = [
    ["w1", 1, "llm", L, COSTS_SEED.chain, false, 1, 1000, 200, 0.002, today(50, 20)],
    ["w2", 1, "llm", L, COSTS_SEED.chain, false, 2, 2100, 330, 0.0025, today(40, 20)],
    ["w3", 1, "local", LOCAL, COSTS_SEED.chain, true, 2, 0, 0, 0, today(30, 20)],
    ["p1", 2, "local", LOCAL, COSTS_SEED.chain, true, 2, 0, 0, 0, today(5, 20)],
    ["g3", 1, "local", LOCAL, COSTS_SEED.chain, true, 3, 1700, 250, 0.002, today(10, 20)],
    ["w0", 1, "llm", L, COSTS_SEED.oldChain, false, 1, 2000, 400, 0.01, daysAgo(3)],
    ["w8", 1, "llm", L, COSTS_SEED.chain, false, 1, 9000, 900, 0.05, daysAgo(8)],
  ];
  for (const [item, v, provider, model, extractor, fell, n, tin, tout, cost, at] of extractions) {
    const entities = item === "w1" ? [{ text: "Dhaka", type: "place" }] : [];
    await p.$executeRaw`
      INSERT INTO item_extractions (entry_key, item_version, source_id, language, category,
                                    entities, summary, provider, model, prompt_version,
                                    extractor, fell_over, calls, tokens_in, tokens_out, cost_usd,
                                    extracted_at)
      VALUES (${costKey(item)}, ${v}, ${sourceOf.get(item) ?? "wire"}, 'en', 'politics',
              ${JSON.stringify(entities)}::jsonb, ${`Summary of ${item}`}, ${provider}, ${model},
              ${provider === "llm" ? "extract-v1" : "local-v1"}, ${extractor}, ${fell}, ${n},
              ${tin}, ${tout}, ${cost}, ${at})`;
  }
}
