import { canonicalizeUrl } from "@/lib/canonical";
import {
  type ActionResult,
  PAUSED_REASON,
  REMOVED_REASON,
  SOURCE_AUDIT_ACTIONS,
} from "@/lib/dashboard/sources";
import type { Database } from "@/lib/db";
import { Prisma } from "@/lib/generated/prisma/client";
import { dropWaitingSql } from "@/workers/queue/dropWaiting";
import { makeDueSql } from "@/workers/queue/makeDue";
import { wakeSql } from "@/workers/queue/wake";
import { checkSourceUrl } from "@/workers/sources/discover";
import {
  type ApplyResult,
  applyImport,
  existingSources,
  type ImportPlan,
  importedSourceId,
  parseOpml,
  planImport,
} from "@/workers/sources/opml";
import { type SourceConfig, sourceSchema } from "@/workers/sources/sourcesFile";
import { syncFrontier } from "@/workers/stages/frontier";
import { forgetCachedStorySources, syncTickers } from "@/workers/stories/source";
import { auditInsertSql } from "./audit";

/**
 * The Sources page's admin actions. Each is one statement with its admin_audit row (a CTE), so
 * the change and its record commit together, and the count recorded is the statement's own.
 */

const sourceAudit = (actor: string, action: string, sourceId: string, affected: Prisma.Sql) =>
  auditInsertSql({
    actor,
    action,
    target: { sourceId },
    dryRun: false,
    affected,
    detail: Prisma.sql`NULL::jsonb`,
  });

async function exists(db: Database, id: string): Promise<boolean> {
  return (await db.prisma.source.count({ where: { id } })) > 0;
}

/**
 * Makes the source's waiting poll (fetch job) or catch-up (story-api) due now and wakes its
 * consumers. A leased job is already running; the breaker still decides whether a fetch goes out.
 */
export async function fetchSourceNow(
  db: Database,
  id: string,
  actor: string,
): Promise<ActionResult | null> {
  if (!(await exists(db, id))) return null;
  const [row] = await db.prisma.$queryRaw<{ affected: number; audit_id: string }[]>`
    WITH due AS (${makeDueSql(
      Prisma.sql`source_id = ${id} AND (queue = 'fetch' OR (queue = 'story' AND key LIKE 'catchup:%'))`,
    )}),
    audit AS (${sourceAudit(actor, SOURCE_AUDIT_ACTIONS.fetchNow, id, Prisma.sql`SELECT count(*) FROM due`)})
    SELECT (SELECT count(*) FROM due)::int AS affected,
           (SELECT id FROM audit)::text AS audit_id,
           (${wakeSql("due")}) AS woke`;
  if (!row) throw new Error("fetch now: no answer");
  return {
    affected: row.affected,
    auditId: row.audit_id,
    message:
      row.affected > 0
        ? `${row.affected} job(s) due now (poll or catch-up)`
        : "no waiting poll or catch-up (running, paused, or a stream)",
  };
}

/**
 * Pauses a source: the reason is set (creating its state row if fetching never did) unless it is
 * already disabled, and its waiting fetch/stream jobs are deleted at once so the frontier stops
 * without waiting for the next sync.
 */
export async function pauseSource(
  db: Database,
  id: string,
  actor: string,
): Promise<ActionResult | null> {
  if (!(await exists(db, id))) return null;
  const [row] = await db.prisma.$queryRaw<
    { affected: number; dropped: number; audit_id: string; reason: string | null }[]
  >`
    WITH paused AS (
      INSERT INTO source_state (source_id, disabled_reason, disabled_at, updated_at)
      VALUES (${id}, ${PAUSED_REASON}, now(), now())
      ON CONFLICT (source_id) DO UPDATE
        SET disabled_reason = excluded.disabled_reason, disabled_at = now(), updated_at = now()
        WHERE source_state.disabled_reason IS NULL
      RETURNING source_id
    ),
    dropped AS (${dropWaitingSql(
      Prisma.sql`source_id = ${id}
                 AND (queue IN ('fetch', 'stream') OR (queue = 'story' AND key LIKE 'catchup:%'))`,
    )}),
    audit AS (${sourceAudit(actor, SOURCE_AUDIT_ACTIONS.pause, id, Prisma.sql`SELECT count(*) FROM paused`)})
    SELECT (SELECT count(*) FROM paused)::int AS affected,
           (SELECT count(*) FROM dropped)::int AS dropped,
           (SELECT id FROM audit)::text AS audit_id,
           (SELECT disabled_reason FROM source_state WHERE source_id = ${id}) AS reason`;
  if (!row) throw new Error("pause: no answer");
  return {
    affected: row.affected,
    auditId: row.audit_id,
    message:
      row.affected > 0
        ? `paused; ${row.dropped} waiting job(s) removed`
        : `already disabled (${row.reason ?? "unknown"})`,
  };
}

/**
 * Resumes a source paused by an admin (a source disabled by a 404/410 stays disabled), then
 * syncs the frontier so its jobs are back at once, due now.
 */
export async function resumeSource(
  db: Database,
  id: string,
  actor: string,
): Promise<ActionResult | null> {
  if (!(await exists(db, id))) return null;
  const [row] = await db.prisma.$queryRaw<{ affected: number; audit_id: string }[]>`
    WITH resumed AS (
      UPDATE source_state
      SET disabled_reason = NULL, disabled_at = NULL, updated_at = now()
      WHERE source_id = ${id} AND disabled_reason = ${PAUSED_REASON}
      RETURNING source_id
    ),
    audit AS (${sourceAudit(actor, SOURCE_AUDIT_ACTIONS.resume, id, Prisma.sql`SELECT count(*) FROM resumed`)})
    SELECT (SELECT count(*) FROM resumed)::int AS affected, (SELECT id FROM audit)::text AS audit_id`;
  if (!row) throw new Error("resume: no answer");
  if (row.affected > 0) await syncFrontier(db);
  return {
    affected: row.affected,
    auditId: row.audit_id,
    message: row.affected > 0 ? "resumed" : "not paused by an admin",
  };
}

/**
 * A refused add/edit/remove, as the route answers it: 400 bad input, 404 unknown, 409 conflict
 * (a file source, a removed one, an id or URL taken), 422 a URL the SSRF guard refuses.
 */
export class SourceAdminError extends Error {
  constructor(
    readonly status: 400 | 404 | 409 | 422,
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = "SourceAdminError";
  }
}

/**
 * Path segments beside /api/sources/:id (discover, preview, opml): a source with one of these ids
 * could not be read at /api/sources/<id>, so the dashboard does not give them out.
 */
const RESERVED_IDS = new Set(["discover", "preview", "opml"]);

/** What the add form sends: a source as the sources file writes one, id and name optional. */
export type NewSourceInput = Partial<Omit<SourceConfig, "enabled" | "observes" | "folder">> & {
  url: string;
  /** "News/Tech"; null or "" (or none) at the top. */
  folder?: string | null;
};

/** What the edit form may change; kind and id stay (another kind is another source). */
export type SourceEdit = Partial<
  Pick<
    SourceConfig,
    | "name"
    | "url"
    | "backfillUrl"
    | "allowPrivate"
    | "pollIntervalSeconds"
    | "collectors"
    | "tickers"
    | "storyMode"
    | "webhookSecrets"
    | "render"
  >
> & { folder?: string | null };

/**
 * The sources file's rules (sourceSchema) for a dashboard source, plus the URL checks the fetcher
 * would make at once (credentials, and internal names and addresses unless allowPrivate), so a
 * source that could never be fetched is not saved. Problems name the field, like the file's.
 */
function validated(candidate: Record<string, unknown>): SourceConfig {
  const parsed = sourceSchema.safeParse(candidate);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new SourceAdminError(
      400,
      "bad_request",
      `${issue?.path.join(".") || "source"}: ${issue?.message ?? "invalid"}`,
    );
  }
  const s = parsed.data;
  for (const field of ["url", "backfillUrl"] as const) {
    const raw = s[field];
    if (raw === undefined) continue;
    const checked = checkSourceUrl(raw, s.allowPrivate);
    if (!("url" in checked)) {
      throw new SourceAdminError(
        checked.code === "blocked_ssrf" ? 422 : 400,
        checked.code,
        `${field}: ${checked.message}`,
      );
    }
  }
  return s;
}

const sameUrl = (a: string, b: string) => {
  try {
    return canonicalizeUrl(a) === canonicalizeUrl(b);
  } catch {
    return a === b;
  }
};

/**
 * Adds a dashboard source (config_origin 'dashboard'): the id given, or the one an OPML import
 * would give the same URL (host plus a hash of its canonical URL), so importing it later finds
 * it. Refused with 409 when the id is taken (by any source, removed ones included: their history
 * keeps it) or the URL is already a source's. One statement inserts the row, its state and the
 * audit row; then a story-api source's tickers are loaded (syncTickers makes its catch-up due)
 * and the frontier is synced so the first poll is due at once.
 */
export async function addSource(
  db: Database,
  input: NewSourceInput,
  actor: string,
): Promise<ActionResult & { sourceId: string }> {
  let parsedUrl: URL;
  try {
    parsedUrl = new URL(input.url);
  } catch {
    throw new SourceAdminError(
      400,
      "bad_request",
      `url: "${String(input.url).slice(0, 200)}" is not an absolute URL`,
    );
  }
  const id = input.id ?? importedSourceId(canonicalizeUrl(parsedUrl.href), parsedUrl);
  if (RESERVED_IDS.has(id)) {
    throw new SourceAdminError(
      400,
      "bad_request",
      `id: "${id}" is reserved (a path of /api/sources)`,
    );
  }
  const s = validated({
    ...input,
    id,
    name: input.name?.trim() || parsedUrl.host,
    folder: input.folder?.trim() || undefined,
  });
  const existing = await db.prisma.source.findMany({
    select: { id: true, url: true, configOrigin: true },
  });
  const sameId = existing.find((e) => e.id === s.id);
  if (sameId) {
    throw new SourceAdminError(
      409,
      "id_taken",
      `id "${s.id}" is already a source (${originWords(sameId.configOrigin)})`,
    );
  }
  const sameFeed = existing.find((e) => e.url !== null && sameUrl(e.url, s.url));
  if (sameFeed) {
    throw new SourceAdminError(
      409,
      "already_a_source",
      `${s.url} is already source "${sameFeed.id}" (${originWords(sameFeed.configOrigin)})`,
    );
  }
  const [row] = await db.prisma.$queryRaw<{ affected: number; audit_id: string }[]>`
    WITH inserted AS (
      INSERT INTO sources (id, name, kind, url, backfill_url, allow_private, enabled,
                           poll_interval_seconds, collectors, tickers, story_mode, webhook_secrets,
                           render, folder, config_origin, updated_at)
      VALUES (${s.id}, ${s.name}, ${s.kind}, ${s.url}, ${s.backfillUrl ?? null}, ${s.allowPrivate},
              true, ${s.pollIntervalSeconds}::int, ${s.collectors}::text[], ${s.tickers ?? []}::text[],
              ${s.kind === "story-api" ? (s.storyMode ?? "snapshot") : null},
              ${s.webhookSecrets ?? []}::text[], ${renderOf(s)}, ${s.folder ?? null}, 'dashboard', now())
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
      action: SOURCE_AUDIT_ACTIONS.add,
      target: { sourceId: s.id },
      dryRun: false,
      affected: Prisma.sql`SELECT count(*) FROM inserted`,
      detail: Prisma.sql`${JSON.stringify(publicSettings(s))}::jsonb`,
    })})
    SELECT (SELECT count(*) FROM inserted)::int AS affected, (SELECT id FROM audit)::text AS audit_id,
           (SELECT count(*) FROM state)::int AS states`;
  if (!row) throw new Error("add source: no answer");
  // Added meanwhile by another admin or an import: the id's unique key decided.
  if (row.affected === 0)
    throw new SourceAdminError(409, "id_taken", `id "${s.id}" was added meanwhile`);
  await afterChange(db, s.id);
  return {
    sourceId: s.id,
    affected: 1,
    auditId: row.audit_id,
    message: `added "${s.name}" (${s.id})`,
  };
}

/**
 * Edits a dashboard source. A file source is refused with 409 (the file is its source of truth,
 * and the next sync would undo the edit); a removed one too. A new URL forgets the old one's
 * validators and body hash, so the first poll of the new URL is a full fetch. Audited with what
 * changed (secrets as a count, never their values).
 */
export async function editSource(
  db: Database,
  id: string,
  edit: SourceEdit,
  actor: string,
): Promise<ActionResult> {
  const current = await dashboardSource(db, id);
  const next = validated({
    id: current.id,
    name: current.name,
    kind: current.kind,
    url: current.url ?? undefined,
    backfillUrl: current.backfillUrl ?? undefined,
    allowPrivate: current.allowPrivate,
    pollIntervalSeconds: current.pollIntervalSeconds,
    collectors: current.collectors,
    ...(current.kind === "page" ? { render: current.render } : {}),
    ...(current.folder ? { folder: current.folder } : {}),
    ...(current.kind === "story-api"
      ? {
          tickers: current.tickers,
          storyMode: current.storyMode ?? "snapshot",
          webhookSecrets: current.webhookSecrets,
        }
      : {}),
    ...Object.fromEntries(
      Object.entries(edit).filter(([k, v]) => v !== undefined && !(k === "folder" && !v)),
    ),
    // null or "" files the source at the top again.
    ...(edit.folder === null || edit.folder === "" ? { folder: undefined } : {}),
  });
  if (next.url !== current.url) {
    const others = await db.prisma.source.findMany({
      where: { id: { not: id } },
      select: { id: true, url: true },
    });
    const sameFeed = others.find((e) => e.url !== null && sameUrl(e.url, next.url));
    if (sameFeed)
      throw new SourceAdminError(
        409,
        "already_a_source",
        `${next.url} is already source "${sameFeed.id}"`,
      );
  }
  const before: Record<string, unknown> = { ...publicSettings(settingsOf(current)) };
  const after: Record<string, unknown> = { ...publicSettings(next) };
  const changed = Object.keys(after).filter(
    (k) => JSON.stringify(before[k]) !== JSON.stringify(after[k]),
  );
  const [row] = await db.prisma.$queryRaw<{ affected: number; audit_id: string }[]>`
    WITH edited AS (
      UPDATE sources
      SET name = ${next.name}, url = ${next.url}, backfill_url = ${next.backfillUrl ?? null},
          allow_private = ${next.allowPrivate}, poll_interval_seconds = ${next.pollIntervalSeconds}::int,
          collectors = ${next.collectors}::text[], tickers = ${next.tickers ?? []}::text[],
          story_mode = ${next.kind === "story-api" ? (next.storyMode ?? "snapshot") : null},
          webhook_secrets = ${next.webhookSecrets ?? []}::text[], render = ${renderOf(next)},
          folder = ${next.folder ?? null}, updated_at = now()
      WHERE id = ${id} AND config_origin <> 'file'
      RETURNING id
    ),
    revalidate AS (
      UPDATE source_state
      SET etag = NULL, last_modified = NULL, body_sha256 = NULL, updated_at = now()
      WHERE source_id = ${id} AND ${next.url !== current.url} AND EXISTS (SELECT 1 FROM edited)
      RETURNING source_id
    ),
    audit AS (${auditInsertSql({
      actor,
      action: SOURCE_AUDIT_ACTIONS.edit,
      target: { sourceId: id },
      dryRun: false,
      affected: Prisma.sql`SELECT count(*) FROM edited`,
      detail: Prisma.sql`${JSON.stringify({
        changed,
        before: Object.fromEntries(changed.map((k) => [k, before[k]])),
        after: Object.fromEntries(changed.map((k) => [k, after[k]])),
      })}::jsonb`,
    })})
    SELECT (SELECT count(*) FROM edited)::int AS affected, (SELECT id FROM audit)::text AS audit_id,
           (SELECT count(*) FROM revalidate)::int AS revalidated`;
  if (!row) throw new Error("edit source: no answer");
  await afterChange(db, id);
  return {
    affected: row.affected,
    auditId: row.audit_id,
    message: changed.length ? `saved: ${changed.join(", ")}` : "nothing changed",
  };
}

/**
 * Removes a dashboard source without deleting it: switched off with REMOVED_REASON, its waiting
 * jobs dropped, so nothing fetches it again, while its items, observations, story events and
 * audit rows stay, and its id and URL stay taken (a row's history names them). Resume does not
 * undo it (resume clears only an admin's pause). A file source is refused with 409: remove it from
 * the file. One statement with its audit row.
 */
export async function removeSource(db: Database, id: string, actor: string): Promise<ActionResult> {
  await dashboardSource(db, id);
  const [row] = await db.prisma.$queryRaw<
    { affected: number; dropped: number; audit_id: string }[]
  >`
    WITH removed AS (
      UPDATE sources SET enabled = false, updated_at = now()
      WHERE id = ${id} AND config_origin <> 'file'
      RETURNING id
    ),
    marked AS (
      INSERT INTO source_state (source_id, disabled_reason, disabled_at, updated_at)
      SELECT id, ${REMOVED_REASON}, now(), now() FROM removed
      ON CONFLICT (source_id) DO UPDATE
        SET disabled_reason = excluded.disabled_reason, disabled_at = now(), updated_at = now()
      RETURNING source_id
    ),
    dropped AS (${dropWaitingSql(
      Prisma.sql`source_id = ${id} AND EXISTS (SELECT 1 FROM sources WHERE id = ${id} AND config_origin <> 'file')
                 AND (queue IN ('fetch', 'stream') OR (queue = 'story' AND key LIKE 'catchup:%'))`,
    )}),
    audit AS (${sourceAudit(actor, SOURCE_AUDIT_ACTIONS.remove, id, Prisma.sql`SELECT count(*) FROM removed`)})
    SELECT (SELECT count(*) FROM removed)::int AS affected, (SELECT count(*) FROM dropped)::int AS dropped,
           (SELECT id FROM audit)::text AS audit_id, (SELECT count(*) FROM marked)::int AS marked`;
  if (!row) throw new Error("remove source: no answer");
  forgetCachedStorySources(db);
  return {
    affected: row.affected,
    auditId: row.audit_id,
    message: `removed; ${row.dropped} waiting job(s) dropped, its items and history kept`,
  };
}

/** A source's settings as the edit form shows them (webhook secrets as a count only). */
export async function sourceSettings(db: Database, id: string) {
  const s = await db.prisma.source.findUnique({ where: { id }, include: { state: true } });
  if (!s) return null;
  return {
    id: s.id,
    configOrigin: s.configOrigin,
    removed: s.state?.disabledReason === REMOVED_REASON,
    editable: s.configOrigin !== "file" && s.state?.disabledReason !== REMOVED_REASON,
    ...publicSettings(settingsOf(s)),
  };
}

type SourceRowData = NonNullable<Awaited<ReturnType<Database["prisma"]["source"]["findUnique"]>>>;

interface Settings {
  name: string;
  kind: string;
  render?: string;
  folder?: string;
  url: string;
  backfillUrl?: string;
  allowPrivate: boolean;
  pollIntervalSeconds: number;
  collectors: string[];
  tickers?: string[];
  storyMode?: string;
  webhookSecrets?: string[];
}

function settingsOf(s: SourceRowData): Settings {
  return {
    name: s.name,
    kind: s.kind,
    url: s.url ?? "",
    backfillUrl: s.backfillUrl ?? undefined,
    allowPrivate: s.allowPrivate,
    pollIntervalSeconds: s.pollIntervalSeconds,
    collectors: s.collectors,
    tickers: s.kind === "story-api" ? s.tickers : undefined,
    storyMode: s.kind === "story-api" ? (s.storyMode ?? "snapshot") : undefined,
    webhookSecrets: s.kind === "story-api" ? s.webhookSecrets : undefined,
    render: s.kind === "page" ? s.render : undefined,
    folder: s.folder ?? undefined,
  };
}

/** How a source is read: only a page may be rendered in the browser. */
function renderOf(s: { kind: string; render?: string }): "http" | "browser" {
  return s.kind === "page" && s.render === "browser" ? "browser" : "http";
}

/** A source's settings as shown and audited: webhook secrets as a count. */
export interface PublicSettings {
  name: string;
  kind: string;
  url: string;
  backfillUrl: string | null;
  allowPrivate: boolean;
  pollIntervalSeconds: number;
  collectors: string[];
  tickers?: string[];
  storyMode?: string;
  webhookSecrets?: number;
  /** page: "http" or "browser". */
  render?: string;
  /** The folder it is filed in ("News/Tech"); null at the top. */
  folder: string | null;
}

/** Settings fit to show and audit: a secret's value never leaves the database. */
function publicSettings(s: Settings): PublicSettings {
  return {
    name: s.name,
    kind: s.kind,
    url: s.url,
    backfillUrl: s.backfillUrl ?? null,
    allowPrivate: s.allowPrivate,
    pollIntervalSeconds: s.pollIntervalSeconds,
    collectors: s.collectors,
    folder: s.folder ?? null,
    ...(s.kind === "page" ? { render: renderOf(s) } : {}),
    ...(s.kind === "story-api"
      ? {
          tickers: s.tickers ?? [],
          storyMode: s.storyMode ?? "snapshot",
          webhookSecrets: s.webhookSecrets?.length ?? 0,
        }
      : {}),
  };
}

/** The source an edit or removal may touch: it exists, is the dashboard's, and is not removed. */
async function dashboardSource(db: Database, id: string) {
  const s = await db.prisma.source.findUnique({ where: { id }, include: { state: true } });
  if (!s) throw new SourceAdminError(404, "not_found", `no source "${id}"`);
  if (s.configOrigin === "file") {
    throw new SourceAdminError(
      409,
      "file_source",
      `source "${id}" comes from the sources file, which stays its source of truth: change it there`,
    );
  }
  if (s.state?.disabledReason === REMOVED_REASON) {
    throw new SourceAdminError(
      409,
      "removed",
      `source "${id}" was removed; its history is kept read-only`,
    );
  }
  return s;
}

function originWords(origin: string): string {
  return origin === "file" ? "from the sources file" : "added in the dashboard";
}

/**
 * After a source is added or edited: a story-api source's tickers are brought in step at once
 * (a ticker added gets its stories loaded: syncTickers makes the catch-up due, seed 001's "adding
 * a ticker"), the cached story source is forgotten, and the frontier gets its jobs now instead of
 * at the next 30 s sync.
 */
async function afterChange(db: Database, id: string): Promise<void> {
  const s = await db.prisma.source.findUnique({
    where: { id },
    select: { kind: true, tickers: true },
  });
  await syncFrontier(db);
  if (s?.kind === "story-api") await syncTickers(db, id, s.tickers);
  forgetCachedStorySources(db);
}

/**
 * The dashboard's OPML import: parse → plan against every source → (unless a dry run) apply,
 * then sync the frontier so the new feeds' first polls are due now. The plan is returned either
 * way, so the dry run and the import show the same lines; `strict` adds nothing when the file
 * has any error, as the CLI's --strict.
 */
export async function importOpml(
  db: Database,
  text: string,
  options: {
    dryRun: boolean;
    allowPrivate: boolean;
    strict?: boolean;
    actor: string;
    file?: string;
  },
): Promise<{ plan: ImportPlan; applied: ApplyResult | null }> {
  const doc = parseOpml(text);
  const plan = planImport(doc, doc.readable ? await existingSources(db) : [], {
    allowPrivate: options.allowPrivate,
  });
  if (options.dryRun || !doc.readable || (options.strict && plan.errors > 0)) {
    return { plan, applied: null };
  }
  const applied = await applyImport(db, plan, { actor: options.actor, file: options.file });
  if (applied.added.length > 0) await syncFrontier(db);
  return { plan, applied };
}
