import { createHash } from "node:crypto";
import type { Database } from "@/lib/db";
import { maxAgeFrom } from "@/lib/schedule/nextPoll";
import type { Fetched, PendingPoll } from "@/workers/fetcher";
import type { Delivery, WriteOutcome, Writer } from "@/workers/store";
import { recordActivity, recordContent } from "./collectorStatus";

// The steps every polled source shares, in the order refreshFeed and refreshPage call them.

export interface RefreshOutcome {
  code: string;
  /** Items the writer stored or improved (inserted, upgraded, updated). */
  changed: number;
  entries: number;
  /** The source's hints for the next poll: Cache-Control max-age, RSS ttl, Retry-After. */
  maxAgeSeconds: number | null;
  ttlMinutes: number | null;
  retryAfterSeconds: number | null;
  bodyHash: string | null;
}

/** What the fetch alone says: its code and the source's pacing hints. */
export function fetchedOutcome(fetched: Fetched, previousBodyHash: string | null): RefreshOutcome {
  return {
    code: fetched.code,
    changed: 0,
    entries: 0,
    // A failed poll's Cache-Control describes its error page: waiting an hour on it would keep
    // the breaker from ever reaching its verdict.
    maxAgeSeconds:
      fetched.code === "ok" || fetched.notModified ? maxAgeFrom(fetched.cacheControl) : null,
    ttlMinutes: null,
    retryAfterSeconds: fetched.retryAfterSeconds ?? null,
    bodyHash: previousBodyHash,
  };
}

/** Nothing to read (a failure, a skipped poll, a 304): the verdict, and a 304 is activity. */
export async function settleWithoutBody(
  db: Database,
  poll: PendingPoll,
  sourceId: string,
  collector: string,
  outcome: RefreshOutcome,
): Promise<RefreshOutcome> {
  await poll.settle();
  if (poll.fetched.notModified) await recordActivity(db, sourceId, collector, "not_modified");
  return outcome;
}

/** A body arrived: that is activity, and its hash tells the next look whether it changed. */
export async function bodyArrived(
  db: Database,
  sourceId: string,
  collector: string,
  body: Buffer,
  outcome: RefreshOutcome,
): Promise<RefreshOutcome> {
  await recordActivity(db, sourceId, collector, "fetch");
  return { ...outcome, bodyHash: createHash("sha256").update(body).digest("hex") };
}

export interface Unreadable {
  unreadable: string;
}

/**
 * Reads the body with `read`: its value, or why the body is unreadable (the source's fault).
 * A reader that throws is not the body's fault (a bug, a lost database): the poll is abandoned
 * (its row written as the transport saw it, a probe's slot handed back) and the error goes on.
 */
export async function readBody<T>(
  poll: PendingPoll,
  read: () => Promise<T | Unreadable> | T | Unreadable,
): Promise<T | Unreadable> {
  try {
    return await read();
  } catch (err) {
    await poll.abandon();
    throw err;
  }
}

export function isUnreadable(value: unknown): value is Unreadable {
  return typeof value === "object" && value !== null && "unreadable" in value;
}

/** A 200 that is not what the source promised: the poll is a `parse_error`, a failure. */
export async function settleUnreadable(
  poll: PendingPoll,
  outcome: RefreshOutcome,
  reading: Unreadable,
): Promise<RefreshOutcome> {
  await poll.settle(reading.unreadable);
  return { ...outcome, code: "parse_error", maxAgeSeconds: null };
}

/**
 * The deliveries to the writer, then the poll's one verdict, both awaited: handed to the writer
 * first, so the verdict's statements do not hold a parsed body out of the write buffer while a
 * slow writer has the pool (the buffer's bound is the backpressure); the verdict is about the
 * source, whatever the write does.
 */
export async function writeAndSettle(
  poll: PendingPoll,
  write: Writer,
  deliveries: Delivery[],
): Promise<WriteOutcome[]> {
  const writing = write(deliveries);
  const [settled, wrote] = await Promise.allSettled([poll.settle(), writing]);
  if (settled.status === "rejected") throw settled.reason;
  if (wrote.status === "rejected") throw wrote.reason;
  return wrote.value;
}

/**
 * What the writer made of the deliveries, and content arrival when the body changed since this
 * collector's last look (the first look counts when it brought anything new).
 */
export async function recordWritten(
  db: Database,
  sourceId: string,
  collector: string,
  outcome: RefreshOutcome,
  written: WriteOutcome[],
  previousBodyHash: string | null,
): Promise<RefreshOutcome> {
  const changed = written.filter((o) =>
    ["inserted", "upgraded", "updated"].includes(o.result),
  ).length;
  if (outcome.bodyHash !== previousBodyHash && (previousBodyHash !== null || changed > 0)) {
    await recordContent(db, sourceId, collector);
  }
  return { ...outcome, entries: written.length, changed };
}
