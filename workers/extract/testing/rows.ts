import type { Database } from "@/lib/db";
import { validateExtraction } from "@/lib/extract/schema";
import { CATEGORIES, EXTRACTION_LANGUAGES } from "@/lib/extract/types";

export interface StoredExtraction {
  entry_key: string;
  item_version: number;
  source_id: string;
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
}

export function storedExtractions(db: Database): Promise<StoredExtraction[]> {
  return db.prisma.$queryRaw<StoredExtraction[]>`
    SELECT entry_key, item_version, source_id, language, category, entities, summary, provider,
           model, prompt_version, extractor, fell_over, calls, tokens_in, tokens_out, cost_usd
    FROM item_extractions ORDER BY entry_key`;
}

/**
 * Every stored extraction that the declared schema refuses (lib/extract/schema.ts), or whose
 * columns say what the schema cannot (an empty provider, negative tokens): the tests' closing
 * scan, "nothing invalid in the database after any of it".
 */
export async function invalidExtractions(
  db: Database,
): Promise<{ entryKey: string; errors: string[] }[]> {
  const bad: { entryKey: string; errors: string[] }[] = [];
  for (const r of await storedExtractions(db)) {
    const errors: string[] = [];
    const checked = validateExtraction({
      language: r.language,
      category: r.category,
      entities: r.entities,
      summary: r.summary,
    });
    if (!checked.ok) errors.push(...checked.errors);
    if (!(EXTRACTION_LANGUAGES as readonly string[]).includes(r.language)) errors.push("language");
    if (r.category !== null && !(CATEGORIES as readonly string[]).includes(r.category)) {
      errors.push("category");
    }
    if (!r.provider || !r.model || !r.prompt_version || !r.extractor) errors.push("who made it");
    if (r.calls < 1 || r.tokens_in < 0 || r.tokens_out < 0 || !(r.cost_usd >= 0)) {
      errors.push("what it cost");
    }
    if (errors.length > 0) bad.push({ entryKey: r.entry_key, errors });
  }
  return bad;
}
