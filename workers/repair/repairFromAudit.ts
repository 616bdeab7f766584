import type { Database } from "@/lib/db";

/**
 * Repair from the audit table (seed 000): rebuild current rows from the observations recorded
 * in news_events and report, or fix, every row that differs.
 *
 * What a row "should be" comes from news_rebuild(entry_key), which folds the row's accepted
 * deliveries in recorded order through the writer's own merge rule (news_merge), so repair and
 * the writer cannot disagree about the contract. A row written by an older, buggy writer (seed
 * 000's insert-or-ignore kept a thin fallback row and dropped the rich observation that followed)
 * shows up as a diff; a healthy database shows none.
 *
 * Applying never sends NOTIFY: repaired rows are old news, and waking downstream for them is
 * exactly what the seed's repair avoided. The version still goes up, so readers that cache by
 * version see the change. Each row is written only if its version is still the one the diff was
 * computed from; a row a live writer touched in between is skipped and counted, and the next
 * run looks at it again.
 */

/** Fields a repair compares and may rewrite: what a reader sees, plus the tombstone. */
export const REPAIRED_FIELDS = [
  "quality",
  "title",
  "link",
  "summary",
  "category",
  "language",
  "published_at",
  "breaking",
  "instruments",
  "deleted",
] as const;

export type FieldDiff = Record<string, { from: unknown; to: unknown }>;

export interface RepairRow {
  entryKey: string;
  sourceId: string;
  version: number;
  diff: FieldDiff;
}

export interface RepairReport {
  runId: bigint;
  dryRun: boolean;
  examined: number;
  changed: number;
  skipped: number;
  rows: RepairRow[];
}

export interface RepairOptions {
  dryRun: boolean;
  actor: string;
  batchSize?: number;
  onProgress?: (progress: { examined: number; total: number; changed: number }) => void;
}

export async function repairFromAudit(db: Database, options: RepairOptions): Promise<RepairReport> {
  const batchSize = options.batchSize ?? 500;
  const total = await db.prisma.news.count();
  const run = await db.prisma.repairRun.create({
    data: { actor: options.actor, dryRun: options.dryRun, status: "running", rowsTotal: total },
  });
  const report: RepairReport = {
    runId: run.id,
    dryRun: options.dryRun,
    examined: 0,
    changed: 0,
    skipped: 0,
    rows: [],
  };
  try {
    let after = "";
    for (;;) {
      const keys = (
        await db.prisma.news.findMany({
          where: { entryKey: { gt: after } },
          orderBy: { entryKey: "asc" },
          select: { entryKey: true },
          take: batchSize,
        })
      ).map((r) => r.entryKey);
      if (keys.length === 0) break;
      after = keys[keys.length - 1] as string;

      const drifted = await findDrift(db, keys);
      const applied = options.dryRun ? new Set<string>() : await applyRebuilt(db, drifted);
      if (drifted.length > 0) {
        await db.prisma.repairChange.createMany({
          data: drifted.map((row) => ({
            runId: run.id,
            entryKey: row.entryKey,
            diff: row.diff as object,
            applied: applied.has(row.entryKey),
          })),
        });
      }
      report.examined += keys.length;
      report.changed += options.dryRun ? drifted.length : applied.size;
      report.skipped += options.dryRun ? 0 : drifted.length - applied.size;
      report.rows.push(...drifted);
      await db.prisma.repairRun.update({
        where: { id: run.id },
        data: { rowsExamined: report.examined, rowsChanged: report.changed },
      });
      options.onProgress?.({ examined: report.examined, total, changed: report.changed });
    }
    await db.prisma.repairRun.update({
      where: { id: run.id },
      data: { status: "finished", finishedAt: new Date() },
    });
    return report;
  } catch (err) {
    await db.prisma.repairRun.update({
      where: { id: run.id },
      data: { status: "failed", finishedAt: new Date(), error: String((err as Error).message) },
    });
    throw err;
  }
}

interface DriftRow {
  entry_key: string;
  source_id: string;
  version: number;
  current: Record<string, unknown>;
  rebuilt: Record<string, unknown>;
}

/** The rows among `keys` whose current state differs from their rebuilt state. */
async function findDrift(db: Database, keys: string[]): Promise<RepairRow[]> {
  // Rows with no accepted delivery in news_events have nothing to rebuild from and are left as
  // they are (b.entry_key IS NULL). A tombstone is never lifted, so a row tombstoned without an
  // audited retraction is not drift on that account.
  const rows = await db.prisma.$queryRaw<DriftRow[]>`
    SELECT n.entry_key, n.source_id, n.version,
           to_jsonb(n) || jsonb_build_object('deleted', n.deleted_at IS NOT NULL) AS current,
           to_jsonb(b) || jsonb_build_object('deleted', coalesce(n.deleted_at, b.deleted_at) IS NOT NULL) AS rebuilt
    FROM news n CROSS JOIN LATERAL news_rebuild(n.entry_key) AS b
    WHERE n.entry_key = ANY(${keys}::text[])
      AND b.entry_key IS NOT NULL
      AND (n.quality, n.title, n.link, n.summary, n.category, n.language, n.published_at,
           n.breaking, n.instruments, n.deleted_at IS NOT NULL)
          IS DISTINCT FROM
          (b.quality, b.title, b.link, b.summary, b.category, b.language, b.published_at,
           b.breaking, b.instruments, coalesce(n.deleted_at, b.deleted_at) IS NOT NULL)
    ORDER BY n.entry_key`;
  return rows.map((r) => {
    const diff: FieldDiff = {};
    for (const field of REPAIRED_FIELDS) {
      const from = r.current[field] ?? null;
      const to = r.rebuilt[field] ?? null;
      if (JSON.stringify(from) !== JSON.stringify(to)) diff[field] = { from, to };
    }
    return { entryKey: r.entry_key, sourceId: r.source_id, version: Number(r.version), diff };
  });
}

/**
 * Writes the rebuilt state of `rows`, each only if its version is unchanged since the diff.
 * No NOTIFY. A tombstone is never lifted (coalesce keeps an existing deleted_at); first-seen
 * fields and dedup links are not touched. Returns the keys written.
 */
async function applyRebuilt(db: Database, rows: RepairRow[]): Promise<Set<string>> {
  if (rows.length === 0) return new Set();
  const keys = rows.map((r) => r.entryKey);
  const versions = rows.map((r) => r.version);
  const written = await db.prisma.$queryRaw<{ entry_key: string }[]>`
    UPDATE news AS n SET
      quality = b.quality,
      title = b.title, title_stamp = b.title_stamp,
      link = b.link, link_stamp = b.link_stamp,
      summary = b.summary, summary_stamp = b.summary_stamp,
      category = b.category, category_stamp = b.category_stamp,
      language = b.language, published_at = b.published_at,
      breaking = b.breaking, instruments = b.instruments,
      revision = greatest(n.revision, b.revision),
      content_hash = b.content_hash,
      deleted_at = coalesce(n.deleted_at, b.deleted_at),
      version = n.version + 1,
      last_result = 'repaired',
      updated_at = now()
    FROM unnest(${keys}::text[], ${versions}::int[]) AS seen(entry_key, version),
         LATERAL news_rebuild(seen.entry_key) AS b
    WHERE n.entry_key = seen.entry_key AND n.version = seen.version AND b.entry_key IS NOT NULL
    RETURNING n.entry_key`;
  return new Set(written.map((r) => r.entry_key));
}
