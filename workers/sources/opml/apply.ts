import { SOURCE_AUDIT_ACTIONS } from "@/lib/dashboard/sources";
import type { Database } from "@/lib/db";
import { Prisma } from "@/lib/generated/prisma/client";
import { auditInsertSql } from "@/workers/admin/audit";
import type { ExistingSource, ImportPlan, PlannedSource } from "./plan";
import { type OpmlProblem, problem } from "./problems";

/** Every source, for planImport to compare against. */
export async function existingSources(db: Database): Promise<ExistingSource[]> {
  return db.prisma.source.findMany({ select: { id: true, url: true, configOrigin: true } });
}

export interface ApplyResult {
  added: PlannedSource[];
  /** Planned, but a source with its id or URL appeared between the plan and the write. */
  addedMeanwhile: OpmlProblem[];
  /** The admin_audit row, or null when there was nothing to add (nothing was written). */
  auditId: string | null;
}

/**
 * Adds the plan's sources as dashboard sources (config_origin 'dashboard'), filed in the folder
 * the file had them in, with their source_state rows and one admin_audit row, in one statement:
 * all of it commits or none.
 *
 * It only ever inserts, so a source from the sources file (or any other) is never changed: an
 * id already taken is skipped by ON CONFLICT DO NOTHING, and a URL already present is skipped by
 * NOT EXISTS. The plan checked both against a snapshot; this re-check closes the window since
 * then. Two imports of the same feed at once agree on its id (a hash of its canonical URL), so
 * the unique key decides which one adds it and the other skips it. New sources are polled once
 * the frontier next syncs (every 30 s in a running ingestion process), not at once.
 */
export async function applyImport(
  db: Database,
  plan: ImportPlan,
  { actor, file }: { actor: string; file?: string },
): Promise<ApplyResult> {
  if (plan.add.length === 0) return { added: [], addedMeanwhile: [], auditId: null };
  const rows = plan.add.map((s) => ({
    id: s.id,
    name: s.config.name,
    url: s.config.url,
    allow_private: s.config.allowPrivate,
    enabled: s.config.enabled,
    poll_interval_seconds: s.config.pollIntervalSeconds,
    collectors: s.config.collectors,
    folder: s.config.folder ?? null,
  }));
  const [row] = await db.prisma.$queryRaw<{ inserted: string[] | null; audit_id: string }[]>`
    WITH planned AS (
      SELECT * FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) AS p(
        id text, name text, url text, allow_private boolean, enabled boolean,
        poll_interval_seconds int, collectors jsonb, folder text)
    ),
    inserted AS (
      INSERT INTO sources (id, name, kind, url, allow_private, enabled, poll_interval_seconds,
                           collectors, folder, config_origin, updated_at)
      SELECT p.id, p.name, 'feed', p.url, p.allow_private, p.enabled, p.poll_interval_seconds,
             ARRAY(SELECT jsonb_array_elements_text(p.collectors)), p.folder, 'dashboard', now()
      FROM planned p
      WHERE NOT EXISTS (SELECT 1 FROM sources s WHERE s.url = p.url)
      ON CONFLICT (id) DO NOTHING
      RETURNING id
    ),
    state AS (
      INSERT INTO source_state (source_id) SELECT id FROM inserted
      ON CONFLICT (source_id) DO NOTHING
      RETURNING source_id
    ),
    audit AS (${auditInsertSql({
      actor,
      action: SOURCE_AUDIT_ACTIONS.importOpml,
      target: file ? { file } : {},
      dryRun: false,
      affected: Prisma.sql`SELECT count(*) FROM inserted`,
      detail: Prisma.sql`jsonb_build_object(
        'added', (SELECT coalesce(jsonb_agg(id ORDER BY id), '[]'::jsonb) FROM inserted),
        'planned', ${plan.add.length}::int,
        'skipped', ${plan.problems.length}::int,
        'errors', ${plan.errors}::int,
        'opml', ${plan.opml.title ?? ""}::text)`,
    })})
    SELECT (SELECT array_agg(id) FROM inserted) AS inserted,
           (SELECT id FROM audit)::text AS audit_id,
           (SELECT count(*) FROM state)::int AS states`;
  if (!row) throw new Error("opml import: no answer");
  const inserted = new Set(row.inserted ?? []);
  return {
    added: plan.add.filter((s) => inserted.has(s.id)),
    addedMeanwhile: plan.add
      .filter((s) => !inserted.has(s.id))
      .map((s) =>
        problem(
          s.line,
          "already_a_source",
          `${s.url} became a source (id ${s.id} or the same URL) after the plan was made`,
          { url: s.url },
        ),
      ),
    auditId: row.audit_id,
  };
}
