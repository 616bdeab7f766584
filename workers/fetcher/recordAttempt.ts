import type { Database } from "@/lib/db";
import { emit } from "@/lib/events";
import { type FetchCode, isSuccess } from "./classify";

export interface AttemptRecord {
  sourceId: string;
  collector: string;
  code: FetchCode;
  status?: number;
  /** Decompressed body bytes received. */
  bytes: number;
  durationMs: number;
  conditional: boolean;
  /** 0 for the first attempt of a poll, 1 for its first retry … */
  retry: number;
  message?: string;
  /** A 200's validators and body hash, to store for the next conditional request. */
  full?: { etag: string | null; lastModified: string | null; sha256: string };
  /** The request carried no validators: it counts as the honesty check's full fetch. */
  unconditional200?: boolean;
}

/**
 * One fetch_attempts row per attempt (retries included, so error and 304 rates are true) and the
 * source's state, in one statement so the dashboard never sees one without the other. started_at
 * is the database clock minus the duration, like every other time here. last_error_* keep the
 * last failure (with its time) after a success, so "what went wrong last" survives recovery.
 */
export async function recordAttempt(db: Database, a: AttemptRecord): Promise<void> {
  emit("fetch:finished", {
    source: a.sourceId,
    collector: a.collector,
    code: a.code,
    status: a.status ?? null,
    bytes: a.bytes,
    durationSeconds: a.durationMs / 1000,
  });
  const failed = !isSuccess(a.code);
  const message = a.message ? a.message.slice(0, 2_000) : null;
  const hasFull = a.full !== undefined;
  await db.prisma.$executeRaw`
    WITH attempt AS (
      INSERT INTO fetch_attempts (source_id, collector, started_at, duration_ms, code, http_status,
                                  bytes, not_modified, conditional, retry, message)
      VALUES (${a.sourceId}, ${a.collector},
              now() - ${a.durationMs}::double precision * interval '1 millisecond',
              ${Math.round(a.durationMs)}::int, ${a.code}, ${a.status ?? null}::int, ${a.bytes}::int,
              ${a.code === "not_modified"}, ${a.conditional}, ${a.retry}::int, ${message}::text)
    )
    UPDATE source_state SET
      last_polled_at = now(),
      etag = CASE WHEN ${hasFull} THEN ${a.full?.etag ?? null}::text ELSE etag END,
      last_modified = CASE WHEN ${hasFull} THEN ${a.full?.lastModified ?? null}::text ELSE last_modified END,
      body_sha256 = CASE WHEN ${hasFull} THEN ${a.full?.sha256 ?? null}::text ELSE body_sha256 END,
      last_full_fetch_at = CASE WHEN ${a.unconditional200 === true} THEN now() ELSE last_full_fetch_at END,
      last_error_code = CASE WHEN ${failed} THEN ${a.code}::text ELSE last_error_code END,
      last_error_message = CASE WHEN ${failed} THEN ${message}::text ELSE last_error_message END,
      last_error_at = CASE WHEN ${failed} THEN now() ELSE last_error_at END,
      updated_at = now()
    WHERE source_id = ${a.sourceId}`;
}
