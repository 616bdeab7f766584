import type { Database } from "@/lib/db";
import { type EventMap, emit } from "@/lib/events";
import { logger } from "@/lib/logger";
import { auditWebSub, WEBSUB_AUDIT_ACTIONS } from "./audit";
import { RENEW_AT_SHARE, subscriptionByToken } from "./subscriptions";

export interface IntentAnswer {
  status: number;
  /** The challenge, echoed as text/plain, on a confirmed intent; empty otherwise. */
  body: string;
}

/** A challenge longer than this is not a hub's: 1,000 characters is 10× what hubs send. */
const MAX_CHALLENGE_CHARS = 1000;

const NOT_OURS: IntentAnswer = { status: 404, body: "" };

type VerifiedMode = EventMap["websub:verification"]["mode"];

/** hub.mode as the metric's label: a denial is about a subscription; anything else is "other". */
function modeOf(params: URLSearchParams): VerifiedMode {
  const mode = params.get("hub.mode");
  if (mode === "subscribe" || mode === "denied") return "subscribe";
  return mode === "unsubscribe" ? "unsubscribe" : "other";
}

/**
 * A verification at a callback that cannot be ours (a malformed token): 404, counted as refused,
 * no database read.
 */
export function unknownVerification(params: URLSearchParams): IntentAnswer {
  emit("websub:verification", { source: "unknown", mode: modeOf(params), outcome: "refused" });
  return NOT_OURS;
}

/**
 * GET on the callback (WebSub §5.3): the hub asks whether we meant to (un)subscribe. The
 * challenge is echoed only when this callback's token names a subscription that is waiting for
 * exactly this mode on exactly this topic; anything else is a 404, so nobody can use the
 * callback to confirm a subscription we did not ask for. The state moves in one conditional
 * update (the pending mode is the guard), so two racing verifications confirm once.
 * `hub.mode=denied` (§5.2) records the hub's refusal and its reason.
 *
 * Each answer is a `websub:verification` event (a confirmed renewal a `websub:renewal` too); a
 * new subscription, a denial and an unsubscription are recorded on the Audit page.
 */
export async function verifyIntent(
  db: Database,
  token: string,
  params: URLSearchParams,
  now = new Date(),
): Promise<IntentAnswer> {
  const mode = params.get("hub.mode");
  const topic = params.get("hub.topic");
  const row = await subscriptionByToken(db, token);
  const source = row?.sourceId ?? "unknown";
  const settled = (outcome: EventMap["websub:verification"]["outcome"]) =>
    emit("websub:verification", { source, mode: modeOf(params), outcome });
  const notOurs = () => {
    settled("refused");
    return NOT_OURS;
  };
  if (!row || !topic || row.topic !== topic) return notOurs();

  if (mode === "denied") {
    const reason = params.get("hub.reason")?.slice(0, 300) ?? "no reason given";
    const denied = await db.prisma.websubSubscription.updateMany({
      where: { token, pendingMode: "subscribe" },
      data: {
        state: "denied",
        pendingMode: null,
        lastError: `hub denied: ${reason}`,
        updatedAt: now,
      },
    });
    if (denied.count === 0) return notOurs();
    logger().warn({ source, hub: row.hub, reason }, "websub: the hub denied the subscription");
    settled("denied");
    await auditWebSub(db, {
      action: WEBSUB_AUDIT_ACTIONS.denied,
      sourceId: source,
      hub: row.hub,
      detail: { reason, topic },
    });
    return { status: 200, body: "" };
  }

  const challenge = params.get("hub.challenge");
  if (
    (mode !== "subscribe" && mode !== "unsubscribe") ||
    !challenge ||
    challenge.length > MAX_CHALLENGE_CHARS ||
    row.pendingMode !== mode
  ) {
    return notOurs();
  }

  if (mode === "subscribe") {
    // The hub's grant, which may differ from what we asked; without one (the recommendation
    // requires it) what we asked for.
    const granted = Number(params.get("hub.lease_seconds"));
    const lease = Number.isInteger(granted) && granted > 0 ? granted : (row.leaseSeconds ?? 86_400);
    const confirmed = await db.prisma.websubSubscription.updateMany({
      where: { token, pendingMode: "subscribe", topic },
      data: {
        state: "active",
        pendingMode: null,
        leaseSeconds: lease,
        verifiedAt: now,
        expiresAt: new Date(now.getTime() + lease * 1000),
        renewAt: new Date(now.getTime() + lease * 1000 * RENEW_AT_SHARE),
        lastError: null,
        updatedAt: now,
      },
    });
    if (confirmed.count !== 1) return notOurs();
    settled("verified");
    // An active row waiting for a subscribe verification is a renewal (same token and secret).
    if (row.state === "active") {
      emit("websub:renewal", { source, outcome: "renewed" });
    } else {
      await auditWebSub(db, {
        action: WEBSUB_AUDIT_ACTIONS.subscribed,
        sourceId: source,
        hub: row.hub,
        detail: { topic, leaseSeconds: lease },
      });
    }
    return { status: 200, body: challenge };
  }

  const confirmed = await db.prisma.websubSubscription.updateMany({
    where: { token, pendingMode: "unsubscribe", topic },
    data: {
      state: "unsubscribed",
      pendingMode: null,
      expiresAt: null,
      renewAt: null,
      updatedAt: now,
    },
  });
  if (confirmed.count !== 1) return notOurs();
  settled("verified");
  await auditWebSub(db, {
    action: WEBSUB_AUDIT_ACTIONS.unsubscribed,
    sourceId: source,
    hub: row.hub,
    detail: { topic, verified: true },
  });
  return { status: 200, body: challenge };
}
