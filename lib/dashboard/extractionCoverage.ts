import type { Database } from "@/lib/db";

/** How far the canonical items are extracted by one chain (an extraction backfill's progress). */
export interface ExtractionCoverage {
  /** The chain counted (Extractor.id); null when no item was ever extracted and none was named. */
  extractor: string | null;
  /** Canonical items: live, decided unique or left in review by dedup. */
  canonical: number;
  /** Of those, the items with an extraction by `extractor` at their current version. */
  done: number;
  remaining: number;
  /** done / canonical; 1 when there is nothing to extract. */
  ratio: number;
}

/**
 * The extraction backfill's progress for the dashboard (workers/extract/backfill.ts walks the
 * same items): done / canonical for the chain `extractorId`. Without one, the chain that made the
 * newest extraction: the one the workers run now, whichever process they are in (the web server
 * does not build the chain). Two counts over dedup_items (an index on item_extractions'
 * primary key per canonical item): tens of milliseconds at 100,000 items; poll it, not per render.
 */
export async function extractionCoverage(
  db: Database,
  extractorId?: string,
): Promise<ExtractionCoverage> {
  let extractor = extractorId ?? null;
  if (extractor === null) {
    const [newest] = await db.prisma.$queryRaw<{ extractor: string }[]>`
      SELECT extractor FROM item_extractions ORDER BY extracted_at DESC LIMIT 1`;
    extractor = newest?.extractor ?? null;
  }
  const [row] = await db.prisma.$queryRaw<{ canonical: number; done: number }[]>`
    SELECT count(*)::int AS canonical,
           count(*) FILTER (WHERE EXISTS (
             SELECT 1 FROM item_extractions x
             WHERE x.entry_key = d.entry_key AND x.item_version >= d.version
               AND x.extractor = ${extractor}))::int AS done
    FROM dedup_items d
    WHERE d.live AND d.decision_ms IS NOT NULL AND d.outcome IN ('unique', 'review')`;
  const canonical = row?.canonical ?? 0;
  const done = row?.done ?? 0;
  return {
    extractor,
    canonical,
    done,
    remaining: Math.max(0, canonical - done),
    ratio: canonical === 0 ? 1 : done / canonical,
  };
}
