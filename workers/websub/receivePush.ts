import { config } from "@/lib/config";
import type { Database } from "@/lib/db";
import { type EventMap, emit } from "@/lib/events";
import { logger } from "@/lib/logger";
import { recordContent } from "@/workers/collectors/collectorStatus";
import { FeedParseError } from "@/workers/parser/parseFeed";
import { readFeedInSlices, type SlicedRead } from "@/workers/parser/readFeedInSlices";
import { observation } from "@/workers/refreshFeed";
import { type WriteOutcome, type Writer, writeBatch } from "@/workers/store";
import { auditWebSub, WEBSUB_AUDIT_ACTIONS } from "./audit";
import { verifySignature } from "./signature";
import { recordPush, recordRejectedPush, subscriptionByToken } from "./subscriptions";

/** Pushes carry a whole feed document: the fetcher's cap on a polled body (10 MiB) applies. */
export const PUSH_MAX_BYTES = 10 * 1024 * 1024;

/**
 * The collector name pushed observations carry (news_events.collector), beside polls' A/B; also
 * the collector a push's content arrival is recorded under (collector_status), so a pushed feed
 * shows "websub: news 2 min ago" beside its polls, and its health counts the push as a collector
 * that saw news, without it passing for a poll (no fetch attempt, no breaker, no poll time).
 */
export const PUSH_COLLECTOR = "websub";

/** What became of a push: accepted, or the stable code of why not (the metric's outcome). */
export type PushOutcome = EventMap["websub:push"]["outcome"];

export interface PushAnswer {
  status: number;
  body: {
    outcome: "accepted" | "rejected" | "failed";
    reason?: Exclude<PushOutcome, "accepted">;
    message: string;
    entries?: number;
    changed?: number;
  };
}

export interface Push {
  headers: Headers;
  /** The raw body, exactly as received: the signature covers these bytes. */
  body: Buffer;
  /** performance.now() when the request arrived (the push-to-store time counts from it). */
  receivedAt?: number;
}

/** What a push's handling settled, for its event. */
interface Settled {
  answer: PushAnswer;
  source: string;
  storeSeconds: number | null;
}

/**
 * POST on the callback (WebSub §7 content distribution), minus HTTP: the token names the
 * subscription, X-Hub-Signature is checked against its secret on every push (a missing or bad
 * one is refused with 403 and counted on the subscription, never parsed, never written), then
 * the body takes a poll's path: readFeedInSlices with the same entry cap, every entry through
 * the writer with origin `poll` and the entry's updated date as its revision, exactly as
 * refreshFeed writes it, so a push and a poll of the same document write the same rows and the
 * one that comes second is a duplicate. 503 when the write failed: the hub retries.
 *
 * Every push ends in one `websub:push` event (the metrics count it by outcome, and time an
 * accepted one from arrival to written); a refusal the hub should hear about (signature, not a
 * feed) is counted on the row and recorded on the Audit page; one that brought news counts as
 * content arrival for the source's PUSH_COLLECTOR.
 */
export async function receivePush(
  db: Database,
  token: string,
  push: Push,
  write: Writer = (deliveries) => writeBatch(db, deliveries),
): Promise<PushAnswer> {
  let settled: Settled;
  try {
    settled = await settle(db, token, push, write, push.receivedAt ?? performance.now());
  } catch (err) {
    // The database went away between the steps (or a reader failed unexpectedly): nothing was
    // written, so the hub should try again.
    logger().error({ err }, "websub: push not handled; 503 so the hub retries");
    settled = { answer: notWritten(), source: "unknown", storeSeconds: null };
  }
  announce(settled);
  return settled.answer;
}

/** A push to a callback that cannot be ours (a malformed token): 404, counted, nothing read. */
export function unknownCallback(): PushAnswer {
  const answer = refused(404, "unknown_callback", "no subscription at this callback");
  announce({ answer, source: "unknown", storeSeconds: null });
  return answer;
}

/**
 * A push whose body was over PUSH_MAX_BYTES (the route refused it with 413 while reading):
 * counted on its subscription and recorded like a refused signature, since the hub cannot
 * deliver that feed to us at all. Never throws.
 */
export async function refuseOversizedPush(db: Database, token: string): Promise<void> {
  const message = `the push body is over ${PUSH_MAX_BYTES} bytes`;
  const sub = await subscriptionByToken(db, token).catch(() => null);
  if (sub) await noteRefusal(db, token, sub, "too_large", message);
  announce({
    answer: refused(413, "too_large", message),
    source: sub?.sourceId ?? "unknown",
    storeSeconds: null,
  });
}

async function settle(
  db: Database,
  token: string,
  push: Push,
  write: Writer,
  receivedAt: number,
): Promise<Settled> {
  const sub = await subscriptionByToken(db, token);
  if (!sub?.secret || !sub.topic) {
    return {
      answer: refused(404, "unknown_callback", "no subscription at this callback"),
      source: "unknown",
      storeSeconds: null,
    };
  }
  const source = sub.sourceId;
  const no = (status: number, reason: Exclude<PushOutcome, "accepted">, message: string) => ({
    answer: refused(status, reason, message),
    source,
    storeSeconds: null,
  });
  // Checked first, before the state is looked at, so a forged push learns nothing about it.
  const signature = verifySignature(sub.secret, push.body, push.headers.get("x-hub-signature"));
  if (!signature.ok) {
    await noteRefusal(db, token, sub, signature.reason, signature.message);
    logger().warn({ source, reason: signature.reason }, "websub: push refused (signature)");
    return no(403, signature.reason, signature.message);
  }
  if (sub.state !== "active") {
    // 410: the hub should stop; the maintainer has (or will have) unsubscribed.
    return no(410, "not_subscribed", `the subscription is ${sub.state}`);
  }
  const row = await db.prisma.source.findUnique({
    where: { id: source },
    include: { state: true },
  });
  if (!row?.enabled || row.state?.disabledReason) {
    return no(410, "source_off", `source ${source} is removed or paused`);
  }

  let feed: SlicedRead;
  try {
    feed = await readFeedInSlices(push.body, {
      url: sub.topic,
      contentType: push.headers.get("content-type") ?? undefined,
      maxEntries: config().FEED_MAX_ENTRIES,
    });
  } catch (err) {
    if (!(err instanceof FeedParseError)) throw err;
    await noteRefusal(db, token, sub, "parse_error", err.message);
    return no(400, "parse_error", err.message);
  }

  const observedAt = new Date();
  let written: WriteOutcome[];
  try {
    written = await write(
      feed.entries.map((e) => observation(source, PUSH_COLLECTOR, e, observedAt)),
    );
  } catch (err) {
    logger().error({ err, source }, "websub: push not written; 503 so the hub retries");
    return { answer: notWritten(), source, storeSeconds: null };
  }
  const storeSeconds = (performance.now() - receivedAt) / 1000;
  const changed = written.filter((o) =>
    ["inserted", "upgraded", "updated"].includes(o.result),
  ).length;
  await bookkeeping(db, token, source, changed);
  return {
    answer: {
      status: 200,
      body: { outcome: "accepted", message: "written", entries: written.length, changed },
    },
    source,
    storeSeconds,
  };
}

/**
 * After the write: the push counted on its subscription, and, when it brought news the writer
 * stored or improved, content arrival for the source's PUSH_COLLECTOR (the same statement a poll
 * whose body changed runs for its own collector: last content, and the usual gap learned). A
 * push that only repeated what polls had stored is not news arriving. The entries are written
 * whatever happens here, so a failure is logged and the hub still hears 200.
 */
async function bookkeeping(db: Database, token: string, source: string, changed: number) {
  try {
    await recordPush(db, token);
    if (changed > 0) await recordContent(db, source, PUSH_COLLECTOR);
  } catch (err) {
    logger().warn({ err, source }, "websub: push written, but not counted on the source");
  }
}

/** A refusal the hub's side caused: counted on the row, and one audit row (quiet period). */
async function noteRefusal(
  db: Database,
  token: string,
  sub: { sourceId: string; hub: string | null },
  reason: Exclude<PushOutcome, "accepted">,
  message: string,
): Promise<void> {
  await recordRejectedPush(db, token, reason, message).catch((err) =>
    logger().warn({ err }, "websub: could not count a refused push"),
  );
  await auditWebSub(db, {
    action: WEBSUB_AUDIT_ACTIONS.pushRefused,
    sourceId: sub.sourceId,
    hub: sub.hub,
    detail: { reason, message },
  });
}

function announce({ answer, source, storeSeconds }: Settled): void {
  emit("websub:push", {
    source,
    outcome:
      answer.body.outcome === "accepted" ? "accepted" : (answer.body.reason ?? "not_written"),
    storeSeconds,
  });
}

function notWritten(): PushAnswer {
  return {
    status: 503,
    body: { outcome: "failed", reason: "not_written", message: "not written; retry later" },
  };
}

function refused(
  status: number,
  reason: Exclude<PushOutcome, "accepted">,
  message: string,
): PushAnswer {
  return { status, body: { outcome: "rejected", reason, message } };
}
