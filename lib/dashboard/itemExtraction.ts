import type { Database } from "@/lib/db";
import type { Entity } from "@/lib/extract/types";

/**
 * What the item page shows of an item's extraction (lib/extract, workers/extract): the stored
 * result with the provider, model and prompt that made it and what it cost, and every call the
 * ledger holds for the item. A duplicate has no extraction of its own: it takes its cluster
 * canonical's (news.duplicate_of), which is shown as such, and its own calls are none.
 */

/** The item's newest ledger rows shown; an item takes one to a few calls a version. */
export const ITEM_CALLS_SHOWN = 20;

export interface ExtractionView {
  /** "self": the item's own; "canonical": its cluster canonical's, which a duplicate takes. */
  of: "self" | "canonical";
  /** The item the extraction was made for. */
  entryKey: string;
  title: string | null;
  itemVersion: number;
  /** Made for that item's current version (else a re-extraction is due). */
  current: boolean;
  language: string;
  category: string | null;
  entities: Entity[];
  summary: string | null;
  provider: string;
  model: string;
  promptVersion: string;
  extractor: string;
  fellOver: boolean;
  /** What the job paid for that version, every attempt included. */
  calls: number;
  tokensIn: number;
  tokensOut: number;
  costUsd: number;
  extractedAt: string;
}

export interface ItemCall {
  at: string;
  provider: string;
  model: string;
  promptVersion: string | null;
  outcome: string;
  correction: boolean;
  itemVersion: number | null;
  tokensIn: number;
  tokensOut: number;
  costUsd: number;
  latencyMs: number;
  error: string | null;
}

export interface ItemExtraction {
  extraction: ExtractionView | null;
  /** The canonical a duplicate takes its extraction from (null for a canonical item). */
  canonicalKey: string | null;
  /** The ledger's rows for this item itself, all versions (provider_calls_entry_idx). */
  ledger: { calls: number; costUsd: number; tokensIn: number; tokensOut: number };
  /** The newest ITEM_CALLS_SHOWN of them, newest first. */
  recentCalls: ItemCall[];
}

/** An item's extraction, by primary key (item_extractions, news) and its calls by entry_key. */
export async function itemExtraction(
  db: Database,
  entryKey: string,
  duplicateOf: string | null,
): Promise<ItemExtraction> {
  const p = db.prisma;
  const subject = duplicateOf ?? entryKey;
  const [rows, totals, calls] = await Promise.all([
    p.$queryRaw<
      {
        entry_key: string;
        title: string | null;
        item_version: number;
        news_version: number | null;
        language: string;
        category: string | null;
        entities: unknown;
        summary: string | null;
        provider: string;
        model: string;
        prompt_version: string;
        extractor: string;
        fell_over: boolean;
        calls: number;
        tokens_in: number;
        tokens_out: number;
        cost_usd: number;
        extracted_at: Date;
      }[]
    >`
      SELECT x.entry_key, n.title, x.item_version, n.version AS news_version, x.language,
             x.category, x.entities, x.summary, x.provider, x.model, x.prompt_version, x.extractor,
             x.fell_over, x.calls, x.tokens_in, x.tokens_out, x.cost_usd, x.extracted_at
      FROM item_extractions x LEFT JOIN news n ON n.entry_key = x.entry_key
      WHERE x.entry_key = ${subject}`,
    p.$queryRaw<{ calls: number; cost: number; tokens_in: number; tokens_out: number }[]>`
      SELECT count(*)::int AS calls, coalesce(sum(cost_usd), 0)::float8 AS cost,
             coalesce(sum(input_tokens), 0)::float8 AS tokens_in,
             coalesce(sum(output_tokens), 0)::float8 AS tokens_out
      FROM provider_calls WHERE entry_key = ${entryKey}`,
    p.$queryRaw<
      {
        at: Date;
        provider: string;
        model: string;
        prompt_version: string | null;
        outcome: string;
        correction: boolean;
        item_version: number | null;
        input_tokens: number;
        output_tokens: number;
        cost_usd: number;
        latency_ms: number;
        error: string | null;
      }[]
    >`
      SELECT at, provider, model, prompt_version,
             coalesce(outcome, CASE WHEN ok THEN 'ok' ELSE 'error' END) AS outcome, correction,
             item_version, input_tokens, output_tokens, cost_usd, latency_ms, error
      FROM provider_calls WHERE entry_key = ${entryKey}
      ORDER BY at DESC, id DESC LIMIT ${ITEM_CALLS_SHOWN}`,
  ]);
  const x = rows[0];
  const t = totals[0];
  return {
    extraction: x
      ? {
          of: duplicateOf === null ? "self" : "canonical",
          entryKey: x.entry_key,
          title: x.title,
          itemVersion: x.item_version,
          current: x.news_version === null || x.item_version >= x.news_version,
          language: x.language,
          category: x.category,
          entities: Array.isArray(x.entities) ? (x.entities as Entity[]) : [],
          summary: x.summary,
          provider: x.provider,
          model: x.model,
          promptVersion: x.prompt_version,
          extractor: x.extractor,
          fellOver: x.fell_over,
          calls: x.calls,
          tokensIn: x.tokens_in,
          tokensOut: x.tokens_out,
          costUsd: x.cost_usd,
          extractedAt: x.extracted_at.toISOString(),
        }
      : null,
    canonicalKey: duplicateOf,
    ledger: {
      calls: t?.calls ?? 0,
      costUsd: t?.cost ?? 0,
      tokensIn: t?.tokens_in ?? 0,
      tokensOut: t?.tokens_out ?? 0,
    },
    recentCalls: calls.map((c) => ({
      at: c.at.toISOString(),
      provider: c.provider,
      model: c.model,
      promptVersion: c.prompt_version,
      outcome: c.outcome,
      correction: c.correction,
      itemVersion: c.item_version,
      tokensIn: c.input_tokens,
      tokensOut: c.output_tokens,
      costUsd: c.cost_usd,
      latencyMs: c.latency_ms,
      error: c.error,
    })),
  };
}
