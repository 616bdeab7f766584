import { createHash } from "node:crypto";
import type { Database } from "@/lib/db";
import { beginPoll, type Fetched, type FetchSourceOptions } from "@/workers/fetcher";
import { maxAgeFrom } from "@/lib/schedule/nextPoll";
import { type Delivery, type Writer, writeBatch } from "@/workers/store";
import { recordActivity, recordContent } from "./collectorStatus";
import type { SourceRef } from "./sourceRef";

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

/** What a body says: the deliveries it holds, or why it is not readable (the source's fault). */
export type BodyReading = { deliveries: Delivery[]; ttlMinutes?: number } | { unreadable: string };

/**
 * The part every polled source shares: the polite fetch (breaker, robots, rate budget,
 * conditional GET, retries, all recorded) → a 304 is activity → a body is read by `read` → the
 * poll is settled: its one breaker verdict, with the source's own breaker options, and the 200's
 * attempt row with its final code (an unreadable body is `parse_error`, a failure like a 503) →
 * the deliveries go through the writer in one batch (`write`: by default writeBatch; the stages
 * pass the write buffer) → activity, and content when the body changed since this collector's
 * last look (the first look counts when it brought anything new).
 */
export async function pollOnce(
  db: Database,
  source: SourceRef,
  collector: string,
  previousBodyHash: string | null,
  fetchOptions: FetchSourceOptions,
  read: (fetched: Fetched & { body: Buffer }) => BodyReading | Promise<BodyReading>,
  write: Writer = (deliveries) => writeBatch(db, deliveries),
): Promise<RefreshOutcome> {
  const poll = await beginPoll(db, source, collector, fetchOptions);
  const { fetched } = poll;
  const outcome: RefreshOutcome = {
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
  if (fetched.code !== "ok" || !fetched.body) {
    await poll.settle();
    if (fetched.notModified) await recordActivity(db, source.id, collector, "not_modified");
    return outcome;
  }
  await recordActivity(db, source.id, collector, "fetch");
  outcome.bodyHash = createHash("sha256").update(fetched.body).digest("hex");

  let reading: BodyReading;
  try {
    reading = await read({ ...fetched, body: fetched.body });
  } catch (err) {
    await poll.abandon();
    throw err;
  }
  if ("unreadable" in reading) {
    await poll.settle(reading.unreadable);
    return { ...outcome, code: "parse_error", maxAgeSeconds: null };
  }
  outcome.ttlMinutes = reading.ttlMinutes ?? null;
  // Handed to the writer first, then settled, both awaited: the verdict's statements must not
  // hold a parsed body out of the write buffer while a slow writer has the pool (the buffer's
  // bound is the backpressure), and the verdict is about the source, whatever the write does.
  const writing = write(reading.deliveries);
  const [settled, wrote] = await Promise.allSettled([poll.settle(), writing]);
  if (settled.status === "rejected") throw settled.reason;
  if (wrote.status === "rejected") throw wrote.reason;
  const written = wrote.value;
  outcome.entries = reading.deliveries.length;
  outcome.changed = written.filter((o) =>
    ["inserted", "upgraded", "updated"].includes(o.result),
  ).length;
  if (outcome.bodyHash !== previousBodyHash && (previousBodyHash !== null || outcome.changed > 0)) {
    await recordContent(db, source.id, collector);
  }
  return outcome;
}
