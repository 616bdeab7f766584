import type { Database } from "@/lib/db";
import { emit } from "@/lib/events";
import { logger } from "@/lib/logger";
import { FetchError } from "@/workers/fetcher/classify";
import type { AddressPolicy } from "@/workers/fetcher/resolveChecked";
import { robotsRefusal } from "@/workers/fetcher/robots";
import { fetcherDeps, guardedGet } from "@/workers/fetcher/settle";
import { auditWebSub, WEBSUB_AUDIT_ACTIONS } from "./audit";
import { type Advertised, discoverHub } from "./discover";
import { type HubAnswer, type HubRequest, sendHubRequest } from "./hubRequest";
import { callbackUrl, newSecret, newToken } from "./subscriptions";

export interface MaintainOptions {
  /** WIREWATCH_WEBSUB_CALLBACK_URL: the app's public address. */
  callbackBase: string;
  /** WIREWATCH_WEBSUB_LEASE_SECONDS: the lease asked for. */
  leaseSeconds: number;
  now?: Date;
  /** Tests: how a feed is fetched for discovery, and how a hub is asked. */
  discover?: (feed: FeedToCheck) => Promise<Advertised>;
  askHub?: (hub: string, request: HubRequest, policy: AddressPolicy) => Promise<HubAnswer>;
}

export interface FeedToCheck {
  id: string;
  url: string;
  allowPrivate: boolean;
}

export interface MaintainSummary {
  checked: number;
  subscribed: number;
  renewed: number;
  unsubscribed: number;
  failed: number;
}

/** A feed without a hub is looked at again once a day: hubs are added rarely. */
const RECHECK_NO_HUB_MS = 24 * 3600_000;
/** A failed subscription (hub down, never verified) is retried after an hour … */
const RETRY_FAILED_MS = 3600_000;
/** … a denied one after a day (the hub said no; asking every minute would be rude). */
const RETRY_DENIED_MS = 24 * 3600_000;
/**
 * A hub verifies intent within seconds; 10 minutes without it means the request was lost (or
 * the callback is not reachable from the hub): the subscription is marked failed.
 */
const VERIFY_WITHIN_MS = 10 * 60_000;

/**
 * One round of subscription upkeep, run by every ingestion process now and then (a minute):
 * feeds not looked at are fetched once for discovery and subscribed when they advertise a hub;
 * leases at 80 % are renewed (same token and secret: the hub re-verifies); subscriptions of
 * sources removed, switched off or disabled are unsubscribed; requests the hub never verified
 * are marked failed and retried later. Each decision is a conditional update on the row, so two
 * processes running a round at once send at most one extra request, which the hub's
 * verification makes harmless (the second verification finds nothing pending and gets a 404).
 */
export async function maintainSubscriptions(
  db: Database,
  options: MaintainOptions,
): Promise<MaintainSummary> {
  const now = options.now ?? new Date();
  const summary: MaintainSummary = {
    checked: 0,
    subscribed: 0,
    renewed: 0,
    unsubscribed: 0,
    failed: 0,
  };
  const discover = options.discover ?? ((feed: FeedToCheck) => discoverByFetching(db, feed));
  const askHub = options.askHub ?? sendHubRequest;

  summary.failed += await settleUnverified(db, now);

  const sources = await db.prisma.source.findMany({
    where: { enabled: true, kind: "feed", url: { not: null } },
    include: { state: true },
  });
  const wanted = new Map(
    sources
      .filter((s) => !s.state?.disabledReason && s.url)
      .map((s) => [s.id, { id: s.id, url: s.url as string, allowPrivate: s.allowPrivate }]),
  );
  const rows = new Map((await db.prisma.websubSubscription.findMany()).map((r) => [r.sourceId, r]));

  for (const feed of wanted.values()) {
    const row = rows.get(feed.id);
    const age = (at: Date | null | undefined) => (at ? now.getTime() - at.getTime() : Infinity);
    const lapsed = row?.state === "active" && (!row.expiresAt || row.expiresAt <= now);
    const due =
      !row ||
      lapsed ||
      (row.state === "no_hub" && age(row.checkedAt) >= RECHECK_NO_HUB_MS) ||
      (row.state === "failed" && age(row.updatedAt) >= RETRY_FAILED_MS) ||
      (row.state === "denied" && age(row.updatedAt) >= RETRY_DENIED_MS) ||
      row.state === "unsubscribed";
    if (due) {
      summary.checked++;
      const outcome = await subscribeAfresh(db, feed, options, discover, askHub, now);
      if (outcome === "subscribed") summary.subscribed++;
      if (outcome === "failed") summary.failed++;
      continue;
    }
    if (row?.state === "active" && row.pendingMode === null && row.renewAt && row.renewAt <= now) {
      const asked = await ask(db, feed.id, askHub, feed, now, "renew", {
        hub: row.hub as string,
        mode: "subscribe",
        topic: row.topic as string,
        callback: callbackUrl(options.callbackBase, row.token as string),
        leaseSeconds: options.leaseSeconds,
        secret: row.secret as string,
      });
      if (asked) summary.renewed++;
      else summary.failed++;
    }
  }

  for (const row of rows.values()) {
    if (wanted.has(row.sourceId)) continue;
    if (row.state !== "active" && row.state !== "pending") continue;
    if (row.pendingMode === "unsubscribe") continue;
    const source = await db.prisma.source.findUnique({ where: { id: row.sourceId } });
    const asked = await ask(
      db,
      row.sourceId,
      askHub,
      { id: row.sourceId, url: row.topic as string, allowPrivate: source?.allowPrivate ?? false },
      now,
      "unsubscribe",
      {
        hub: row.hub as string,
        mode: "unsubscribe",
        topic: row.topic as string,
        callback: callbackUrl(options.callbackBase, row.token as string),
      },
    );
    if (asked) summary.unsubscribed++;
  }
  return summary;
}

/** Discovery, then a subscription request with a fresh token and secret. */
async function subscribeAfresh(
  db: Database,
  feed: FeedToCheck,
  options: MaintainOptions,
  discover: (feed: FeedToCheck) => Promise<Advertised>,
  askHub: NonNullable<MaintainOptions["askHub"]>,
  now: Date,
): Promise<"subscribed" | "no_hub" | "failed"> {
  let advertised: Advertised;
  try {
    advertised = await discover(feed);
  } catch (err) {
    // The poll reports the feed's own failures; discovery just tries again later.
    await upsert(db, feed.id, {
      state: "failed",
      lastError: `discovery: ${(err as Error).message}`.slice(0, 500),
      checkedAt: now,
      updatedAt: now,
    });
    return "failed";
  }
  if (!advertised.hub) {
    await upsert(db, feed.id, {
      state: "no_hub",
      pendingMode: null,
      checkedAt: now,
      updatedAt: now,
    });
    return "no_hub";
  }
  const token = newToken();
  const secret = newSecret();
  const topic = advertised.self ?? feed.url;
  await upsert(db, feed.id, {
    state: "pending",
    pendingMode: "subscribe",
    hub: advertised.hub,
    topic,
    token,
    secret,
    leaseSeconds: options.leaseSeconds,
    verifiedAt: null,
    expiresAt: null,
    renewAt: null,
    checkedAt: now,
    updatedAt: now,
  });
  const asked = await ask(db, feed.id, askHub, feed, now, "subscribe", {
    hub: advertised.hub,
    mode: "subscribe",
    topic,
    callback: callbackUrl(options.callbackBase, token),
    leaseSeconds: options.leaseSeconds,
    secret,
  });
  return asked ? "subscribed" : "failed";
}

/**
 * Requests the hub never verified within VERIFY_WITHIN_MS, each settled in one statement that
 * returns the rows it moved (so two processes running a round count each row once): a first
 * subscription fails (retried after an hour); an unsubscription is given up (the lease runs out at
 * the hub anyway, and a push to an unsubscribed row is refused with 410); a renewal leaves the
 * subscription active until its lease ends and is asked again on the next round. Returns how many
 * subscriptions failed.
 */
async function settleUnverified(db: Database, now: Date): Promise<number> {
  const stale = new Date(now.getTime() - VERIFY_WITHIN_MS);
  type Moved = { sourceId: string; hub: string | null; lastError: string };
  const failed = await db.prisma.$queryRaw<Moved[]>`
    UPDATE websub_subscriptions
    SET state = 'failed', pending_mode = NULL,
        last_error = 'the hub did not verify intent within 10 minutes',
        updated_at = ${now}::timestamptz
    WHERE pending_mode = 'subscribe' AND state = 'pending' AND requested_at < ${stale}::timestamptz
    RETURNING source_id AS "sourceId", hub, last_error AS "lastError"`;
  const givenUp = await db.prisma.$queryRaw<Moved[]>`
    UPDATE websub_subscriptions
    SET state = 'unsubscribed', pending_mode = NULL,
        last_error = 'the hub did not verify the unsubscription', updated_at = ${now}::timestamptz
    WHERE pending_mode = 'unsubscribe' AND requested_at < ${stale}::timestamptz
    RETURNING source_id AS "sourceId", hub, last_error AS "lastError"`;
  const unrenewed = await db.prisma.$queryRaw<Moved[]>`
    UPDATE websub_subscriptions
    SET pending_mode = NULL, last_error = 'the hub did not verify the renewal',
        updated_at = ${now}::timestamptz
    WHERE pending_mode = 'subscribe' AND state = 'active' AND requested_at < ${stale}::timestamptz
    RETURNING source_id AS "sourceId", hub, last_error AS "lastError"`;
  for (const r of failed) {
    emit("websub:verification", { source: r.sourceId, mode: "subscribe", outcome: "failed" });
    await auditWebSub(db, {
      action: WEBSUB_AUDIT_ACTIONS.failed,
      sourceId: r.sourceId,
      hub: r.hub,
      detail: { reason: "unverified", message: r.lastError },
    });
  }
  for (const r of givenUp) {
    emit("websub:verification", { source: r.sourceId, mode: "unsubscribe", outcome: "failed" });
    await auditWebSub(db, {
      action: WEBSUB_AUDIT_ACTIONS.unsubscribed,
      sourceId: r.sourceId,
      hub: r.hub,
      detail: { verified: false, message: r.lastError },
    });
  }
  for (const r of unrenewed) {
    emit("websub:verification", { source: r.sourceId, mode: "subscribe", outcome: "failed" });
    emit("websub:renewal", { source: r.sourceId, outcome: "unverified" });
  }
  return failed.length;
}

/**
 * Sends one request to the hub and records that it is pending (the verification GET may arrive
 * before the hub's 202 does, so the pending mode is written first). A refusal or an unreachable
 * hub is written on the row; a renewal's is counted (`websub:renewal`), a first subscription's
 * and an unsubscription's recorded on the Audit page.
 */
async function ask(
  db: Database,
  sourceId: string,
  askHub: NonNullable<MaintainOptions["askHub"]>,
  feed: FeedToCheck,
  now: Date,
  purpose: "subscribe" | "renew" | "unsubscribe",
  request: HubRequest & { hub: string },
): Promise<boolean> {
  const { hub, ...rest } = request;
  await db.prisma.websubSubscription.update({
    where: { sourceId },
    data: {
      pendingMode: request.mode,
      requestedAt: now,
      ...(request.mode === "unsubscribe" ? { state: "unsubscribing" } : {}),
      updatedAt: now,
    },
  });
  let problem: string | null = null;
  let unreachable = false;
  try {
    const answer = await askHub(hub, rest, { allowPrivate: feed.allowPrivate });
    if (answer.status < 200 || answer.status >= 300) {
      problem = `hub answered ${answer.status}${answer.detail ? `: ${answer.detail}` : ""}`;
    }
  } catch (err) {
    unreachable = true;
    problem = err instanceof FetchError ? err.message : `hub: ${(err as Error).message}`;
  }
  if (!problem) return true;
  logger().warn(
    { source: sourceId, hub, mode: request.mode, problem },
    "websub: hub request failed",
  );
  // Only while still pending: a verification that raced in has already settled the row. A
  // renewal that failed leaves the live subscription alone (the next round asks again); a first
  // subscription fails; an unsubscription is given up (the hub's lease runs out by itself).
  const settled = { pendingMode: null, lastError: problem.slice(0, 500), updatedAt: now };
  const detail = { reason: unreachable ? "hub_unreachable" : "hub_refused", message: problem };
  if (purpose === "unsubscribe") {
    const given = await db.prisma.websubSubscription.updateMany({
      where: { sourceId, pendingMode: "unsubscribe" },
      data: { ...settled, state: "unsubscribed" },
    });
    if (given.count > 0) {
      await auditWebSub(db, {
        action: WEBSUB_AUDIT_ACTIONS.unsubscribed,
        sourceId,
        hub,
        detail: { ...detail, verified: false },
      });
    }
    return false;
  }
  const failed = await db.prisma.websubSubscription.updateMany({
    where: { sourceId, pendingMode: "subscribe", state: "pending" },
    data: { ...settled, state: "failed" },
  });
  const kept = await db.prisma.websubSubscription.updateMany({
    where: { sourceId, pendingMode: "subscribe", state: "active" },
    data: settled,
  });
  if (failed.count > 0) {
    await auditWebSub(db, { action: WEBSUB_AUDIT_ACTIONS.failed, sourceId, hub, detail });
  }
  if (purpose === "renew" && kept.count > 0) {
    emit("websub:renewal", { source: sourceId, outcome: unreachable ? "unreachable" : "refused" });
  }
  return false;
}

async function upsert(
  db: Database,
  sourceId: string,
  data: Parameters<Database["prisma"]["websubSubscription"]["update"]>[0]["data"],
) {
  await db.prisma.websubSubscription.upsert({
    where: { sourceId },
    create: { sourceId, state: String(data.state ?? "no_hub"), ...(data as object) },
    update: data,
  });
}

/**
 * Discovery's own GET of the feed: once per feed when first seen, then once a day while it has
 * no hub. As politely as a poll: robots.txt first (cached per origin, as polls use it), then the
 * fetcher's guarded GET (SSRF on the resolved address and every redirect, pinned socket, the
 * host's rate budget shared with the polls, timeouts, a size cap); the Link headers and the body
 * are read for the hub.
 */
async function discoverByFetching(db: Database, feed: FeedToCheck): Promise<Advertised> {
  const get = guardedGet(
    { id: feed.id, url: feed.url, allowPrivate: feed.allowPrivate },
    { limits: { totalTimeoutMs: 15_000 } },
    fetcherDeps({}),
  );
  const refused = await robotsRefusal(db, feed.url, (url, maxBytes) =>
    get(url, { accept: "text/plain, */*;q=0.5" }, maxBytes),
  );
  if (refused) throw new FetchError(refused.code, refused.message);
  const res = await get(feed.url, {
    accept:
      "application/rss+xml, application/atom+xml, application/feed+json, application/xml;q=0.9, */*;q=0.1",
  });
  if (res.status < 200 || res.status >= 300) {
    throw new FetchError("http_4xx", `${feed.url} answered ${res.status}`);
  }
  const contentType = Array.isArray(res.headers["content-type"])
    ? res.headers["content-type"][0]
    : res.headers["content-type"];
  return discoverHub(res.finalUrl, res.headers.link, res.body, contentType);
}
