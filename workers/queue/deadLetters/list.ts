import type { Database } from "@/lib/db";
import { Prisma } from "@/lib/generated/prisma/client";
import type { JobError } from "../types";
import { type DeadLetterFilterInput, deadLetterWhere, parseDeadLetterFilter } from "./filter";

/** A parked job: everything needed to understand and act on it without the logs. */
export interface DeadLetter {
  id: string;
  state: "dead" | "archived";
  /** The queue it failed in. */
  stage: string;
  key: string | null;
  sourceId: string | null;
  payload: Record<string, unknown>;
  priority: number;
  attempts: number;
  maxAttempts: number;
  /** The last failure in full: code, message, stack, host. */
  lastError: JobError | null;
  fingerprint: string | null;
  createdAt: Date;
  firstFailedAt: Date | null;
  lastFailedAt: Date | null;
  deadAt: Date | null;
  archivedAt: Date | null;
  /** How long it has been dead, by the database clock. */
  deadForSeconds: number | null;
  /** How many times it was requeued before. */
  requeues: number;
}

interface Row {
  id: string;
  state: "dead" | "archived";
  queue: string;
  key: string | null;
  source_id: string | null;
  payload: Record<string, unknown>;
  priority: number;
  attempts: number;
  max_attempts: number;
  last_error: JobError | null;
  fingerprint: string | null;
  created_at: Date;
  first_failed_at: Date | null;
  last_failed_at: Date | null;
  dead_at: Date | null;
  archived_at: Date | null;
  dead_for_seconds: number | null;
  requeues: number;
}

const columns = Prisma.sql`
  j.id::text AS id, j.state, j.queue, j.key, j.source_id, j.payload, j.priority, j.attempts,
  j.max_attempts, j.last_error, j.fingerprint, j.created_at, j.first_failed_at, j.last_failed_at,
  j.dead_at, j.archived_at, extract(epoch FROM now() - j.dead_at)::float8 AS dead_for_seconds,
  j.requeues`;

const toDeadLetter = (r: Row): DeadLetter => ({
  id: r.id,
  state: r.state,
  stage: r.queue,
  key: r.key,
  sourceId: r.source_id,
  payload: r.payload,
  priority: r.priority,
  attempts: r.attempts,
  maxAttempts: r.max_attempts,
  lastError: r.last_error,
  fingerprint: r.fingerprint,
  createdAt: r.created_at,
  firstFailedAt: r.first_failed_at,
  lastFailedAt: r.last_failed_at,
  deadAt: r.dead_at,
  archivedAt: r.archived_at,
  deadForSeconds: r.dead_for_seconds,
  requeues: r.requeues,
});

export interface ListOptions {
  /** Page size, 1 to 500 (default 50). */
  limit?: number;
  /** The nextCursor of the previous page: dead letters with a smaller id. */
  cursor?: string | null;
}

export interface DeadLetterPage {
  items: DeadLetter[];
  /** Pass as `cursor` for the next page; null on the last page. */
  nextCursor: string | null;
}

/**
 * Dead letters matching a filter, newest first by id (keyset paging: stable while rows come and
 * go, no OFFSET). Archived ones are not listed.
 */
export async function listDeadLetters(
  db: Database,
  filterInput: DeadLetterFilterInput = {},
  options: ListOptions = {},
): Promise<DeadLetterPage> {
  const filter = parseDeadLetterFilter(filterInput);
  const limit = options.limit ?? 50;
  if (!Number.isInteger(limit) || limit < 1 || limit > 500) {
    throw new RangeError("dead letters: page limit must be an integer from 1 to 500");
  }
  const cursor = options.cursor ?? null;
  if (cursor !== null && !/^[1-9]\d{0,18}$/.test(cursor)) {
    throw new RangeError(`dead letters: bad cursor ${JSON.stringify(cursor)}`);
  }
  const rows = await db.prisma.$queryRaw<Row[]>`
    SELECT ${columns}
    FROM jobs j
    WHERE ${deadLetterWhere(filter)}
      AND (${cursor}::bigint IS NULL OR j.id < ${cursor}::bigint)
    ORDER BY j.id DESC
    LIMIT ${limit + 1}`;
  const page = rows.slice(0, limit).map(toDeadLetter);
  return {
    items: page,
    nextCursor: rows.length > limit ? (page[page.length - 1]?.id ?? null) : null,
  };
}

export interface FailureRecord {
  id: string;
  attempt: number;
  /** 'error' (the stage threw) or 'lease_expired' (its worker stopped answering). */
  kind: string;
  workerId: string | null;
  error: JobError;
  fingerprint: string | null;
  failedAt: Date;
}

export interface LeaseEventRecord {
  id: string;
  at: Date;
  attempt: number;
  workerId: string | null;
  kind: string;
  leaseAgeMs: number;
  waitMs: number | null;
}

export interface DeadLetterDetail extends DeadLetter {
  /** Every failed attempt, oldest first, across requeues. */
  failures: FailureRecord[];
  /** Every lease event of the job still kept (housekeeping trims old ones), oldest first. */
  leaseEvents: LeaseEventRecord[];
}

/**
 * One dead letter (or an archived one) with its whole history; null when there is no such job
 * or it is live (ready or leased: not a dead letter now).
 */
export async function getDeadLetter(db: Database, id: string): Promise<DeadLetterDetail | null> {
  if (!/^[1-9]\d{0,18}$/.test(id))
    throw new RangeError(`dead letters: bad id ${JSON.stringify(id)}`);
  const rows = await db.prisma.$queryRaw<Row[]>`
    SELECT ${columns} FROM jobs j
    WHERE j.id = ${id}::bigint AND j.state IN ('dead', 'archived')`;
  const row = rows[0];
  if (!row) return null;
  const failures = await db.prisma.$queryRaw<
    {
      id: string;
      attempt: number;
      kind: string;
      worker_id: string | null;
      error: JobError;
      fingerprint: string | null;
      failed_at: Date;
    }[]
  >`
    SELECT id::text AS id, attempt, kind, worker_id, error, fingerprint, failed_at
    FROM job_failures WHERE job_id = ${id}::bigint ORDER BY id`;
  const events = await db.prisma.$queryRaw<
    {
      id: string;
      at: Date;
      attempt: number;
      worker_id: string | null;
      kind: string;
      lease_age_ms: number;
      wait_ms: number | null;
    }[]
  >`
    SELECT id::text AS id, at, attempt, worker_id, kind, lease_age_ms, wait_ms
    FROM lease_events WHERE job_id = ${id}::bigint ORDER BY id`;
  return {
    ...toDeadLetter(row),
    failures: failures.map((f) => ({
      id: f.id,
      attempt: f.attempt,
      kind: f.kind,
      workerId: f.worker_id,
      error: f.error,
      fingerprint: f.fingerprint,
      failedAt: f.failed_at,
    })),
    leaseEvents: events.map((e) => ({
      id: e.id,
      at: e.at,
      attempt: e.attempt,
      workerId: e.worker_id,
      kind: e.kind,
      leaseAgeMs: e.lease_age_ms,
      waitMs: e.wait_ms,
    })),
  };
}
