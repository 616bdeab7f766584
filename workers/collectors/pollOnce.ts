import { createHash } from "node:crypto";
import type { Database } from "@/lib/db";
import { type FetchResult, type FetchSourceOptions, fetchSource } from "@/workers/fetcher";
import { maxAgeFrom } from "@/workers/schedule/nextPoll";
import { type Delivery, type Writer, writeBatch } from "@/workers/store";
import { recordActivity, recordContent } from "./collectorStatus";
import { reportParseError } from "./reportParseError";
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
 * conditional GET, retries, all recorded) → a 304 is activity → a body is read by `read` → an
 * unreadable body is recorded and held against the breaker → the deliveries go through the
 * writer in one batch (`write`: by default writeBatch; the stages pass the write buffer) → activity, and content when the body changed since this collector's last
 * look (the first look counts when it brought anything new).
 */
export async function pollOnce(
  db: Database,
  source: SourceRef,
  collector: string,
  previousBodyHash: string | null,
  fetchOptions: FetchSourceOptions,
  read: (fetched: FetchResult & { body: Buffer }) => BodyReading,
  write: Writer = (deliveries) => writeBatch(db, deliveries),
): Promise<RefreshOutcome> {
  const fetched = await fetchSource(db, source, collector, fetchOptions);
  const outcome: RefreshOutcome = {
    code: fetched.code,
    changed: 0,
    entries: 0,
    maxAgeSeconds: maxAgeFrom(fetched.cacheControl),
    ttlMinutes: null,
    retryAfterSeconds: fetched.retryAfterSeconds ?? null,
    bodyHash: previousBodyHash,
  };
  if (fetched.code === "not_modified") {
    await recordActivity(db, source.id, collector, "not_modified");
    return outcome;
  }
  if (fetched.code !== "ok" || !fetched.body) return outcome;
  await recordActivity(db, source.id, collector, "fetch");
  outcome.bodyHash = createHash("sha256").update(fetched.body).digest("hex");

  const reading = read({ ...fetched, body: fetched.body });
  if ("unreadable" in reading) {
    await reportParseError(db, source.id, collector, reading.unreadable);
    return { ...outcome, code: "parse_error" };
  }
  outcome.ttlMinutes = reading.ttlMinutes ?? null;
  const written = await write(reading.deliveries);
  outcome.entries = reading.deliveries.length;
  outcome.changed = written.filter((o) =>
    ["inserted", "upgraded", "updated"].includes(o.result),
  ).length;
  if (outcome.bodyHash !== previousBodyHash && (previousBodyHash !== null || outcome.changed > 0)) {
    await recordContent(db, source.id, collector);
  }
  return outcome;
}
