import { config } from "@/lib/config";
import type { Database } from "@/lib/db";
import { logger } from "@/lib/logger";
import { FeedParseError } from "@/workers/parser/parseFeed";
import { readFeedInSlices, type SlicedRead } from "@/workers/parser/readFeedInSlices";
import { observation } from "@/workers/refreshFeed";
import { type WriteOutcome, type Writer, writeBatch } from "@/workers/store";
import { verifySignature } from "./signature";
import { recordPush, recordRejectedPush, subscriptionByToken } from "./subscriptions";

/** Pushes carry a whole feed document: the fetcher's cap on a polled body (10 MiB) applies. */
export const PUSH_MAX_BYTES = 10 * 1024 * 1024;

/** The collector name pushed observations carry (news_events.collector), beside polls' A/B. */
export const PUSH_COLLECTOR = "websub";

export interface PushAnswer {
  status: number;
  body: {
    outcome: "accepted" | "rejected" | "failed";
    reason?: string;
    message: string;
    entries?: number;
    changed?: number;
  };
}

export interface Push {
  headers: Headers;
  /** The raw body, exactly as received: the signature covers these bytes. */
  body: Buffer;
}

/**
 * POST on the callback (WebSub §7 content distribution), minus HTTP: the token names the
 * subscription, X-Hub-Signature is checked against its secret on every push (a missing or bad
 * one is refused with 403 and counted on the subscription, never parsed, never written), then
 * the body takes a poll's path: readFeedInSlices with the same entry cap, every entry through
 * the writer with origin `poll` and the entry's updated date as its revision, exactly as
 * refreshFeed writes it, so a push and a poll of the same document write the same rows and the
 * one that comes second is a duplicate. 503 when the write failed: the hub retries.
 */
export async function receivePush(
  db: Database,
  token: string,
  push: Push,
  write: Writer = (deliveries) => writeBatch(db, deliveries),
): Promise<PushAnswer> {
  const sub = await subscriptionByToken(db, token);
  if (!sub?.secret || !sub.topic) {
    return refused(404, "unknown_callback", "no subscription at this callback");
  }
  // Checked first, before the state is looked at, so a forged push learns nothing about it.
  const signature = verifySignature(sub.secret, push.body, push.headers.get("x-hub-signature"));
  if (!signature.ok) {
    await recordRejectedPush(db, token, signature.reason, signature.message).catch((err) =>
      logger().warn({ err }, "websub: could not count a refused push"),
    );
    logger().warn(
      { source: sub.sourceId, reason: signature.reason },
      "websub: push refused (signature)",
    );
    return refused(403, signature.reason, signature.message);
  }
  if (sub.state !== "active") {
    // 410: the hub should stop; the maintainer has (or will have) unsubscribed.
    return refused(410, "not_subscribed", `the subscription is ${sub.state}`);
  }
  const source = await db.prisma.source.findUnique({
    where: { id: sub.sourceId },
    include: { state: true },
  });
  if (!source?.enabled || source.state?.disabledReason) {
    return refused(410, "source_off", `source ${sub.sourceId} is removed or paused`);
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
    await recordRejectedPush(db, token, "parse_error", err.message).catch(() => {});
    return refused(400, "parse_error", err.message);
  }

  const observedAt = new Date();
  let written: WriteOutcome[];
  try {
    written = await write(
      feed.entries.map((e) => observation(sub.sourceId, PUSH_COLLECTOR, e, observedAt)),
    );
  } catch (err) {
    logger().error(
      { err, source: sub.sourceId },
      "websub: push not written; 503 so the hub retries",
    );
    return {
      status: 503,
      body: { outcome: "failed", reason: "not_written", message: "not written; retry later" },
    };
  }
  await recordPush(db, token);
  const changed = written.filter((o) =>
    ["inserted", "upgraded", "updated"].includes(o.result),
  ).length;
  return {
    status: 200,
    body: { outcome: "accepted", message: "written", entries: written.length, changed },
  };
}

function refused(status: number, reason: string, message: string): PushAnswer {
  return { status, body: { outcome: "rejected", reason, message } };
}
