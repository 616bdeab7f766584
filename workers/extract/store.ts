import type { Database } from "@/lib/db";
import { validateExtraction } from "@/lib/extract/schema";
import type { ExtractResult } from "@/lib/extract/types";

const NOT_CALLED: ReadonlySet<string> = new Set(["skipped", "budget_exhausted", "breaker_open"]);

export interface StoreInput {
  entryKey: string;
  itemVersion: number;
  sourceId: string;
  /** The chain's id (Extractor.id). */
  extractor: string;
  result: ExtractResult;
}

/**
 * Stores an item's extraction, in one statement guarded by version: a new row, or over the row of
 * an older version, or over the same version's by another chain (a backfill's re-extraction).
 * A late job for an old version, or a second run of the same job racing the first (a rescued
 * lease), changes nothing. The chain only returns validated extractions; it is validated once
 * more here, at the only writer of item_extractions, so nothing invalid is stored whatever the
 * Extractor (seed 002: "malformed output is never saved"). Answers whether the row was written.
 *
 * What the job paid (calls, tokens, cost) counts every call of the chain that made it,
 * corrections and refused providers included, not the providers it passed over without calling;
 * the calls of earlier failed runs of the job are in provider_calls (by entry_key and
 * item_version), where the Costs page's per-article totals read them.
 */
export async function storeExtraction(db: Database, input: StoreInput): Promise<boolean> {
  const { result } = input;
  const checked = validateExtraction(result.extraction);
  if (!checked.ok) {
    throw new Error(
      `extract: the chain returned an extraction that does not validate (${checked.errors.join("; ")}); not stored`,
    );
  }
  const e = checked.value;
  // An attempt the chain made without calling (held back by a Retry-After, over its budget, its
  // breaker open) is in the ledger at cost 0, but is no call.
  const attempts = result.attempts.filter((a) => !NOT_CALLED.has(a.outcome));
  const sum = (f: (a: (typeof attempts)[number]) => number) =>
    attempts.reduce((n, a) => n + (Number.isFinite(f(a)) ? f(a) : 0), 0);
  const written = await db.prisma.$executeRaw`
    INSERT INTO item_extractions (entry_key, item_version, source_id, language, category, entities,
                                  summary, provider, model, prompt_version, extractor, fell_over,
                                  calls, tokens_in, tokens_out, cost_usd, extracted_at)
    VALUES (${input.entryKey}, ${input.itemVersion}, ${input.sourceId}, ${e.language},
            ${e.category}, ${JSON.stringify(e.entities)}::jsonb, ${e.summary}, ${result.provider},
            ${result.model}, ${result.promptVersion}, ${input.extractor}, ${result.fellOver},
            ${Math.max(1, attempts.length)}, ${Math.round(sum((a) => a.tokensIn))},
            ${Math.round(sum((a) => a.tokensOut))}, ${sum((a) => a.costUsd)}, now())
    ON CONFLICT (entry_key) DO UPDATE SET
      item_version = excluded.item_version, source_id = excluded.source_id,
      language = excluded.language, category = excluded.category, entities = excluded.entities,
      summary = excluded.summary, provider = excluded.provider, model = excluded.model,
      prompt_version = excluded.prompt_version, extractor = excluded.extractor,
      fell_over = excluded.fell_over, calls = excluded.calls, tokens_in = excluded.tokens_in,
      tokens_out = excluded.tokens_out, cost_usd = excluded.cost_usd,
      extracted_at = excluded.extracted_at
    WHERE item_extractions.item_version < excluded.item_version
       OR (item_extractions.item_version = excluded.item_version
           AND item_extractions.extractor <> excluded.extractor)`;
  return written > 0;
}
