import { randomBytes } from "node:crypto";
import type { Database } from "@/lib/db";

/** A subscription's states (websub_subscriptions.state), shared with the metrics. */
export { WEBSUB_STATES, type WebSubState } from "@/lib/codes";

/** Renewal at 80 % of the granted lease: a failed renewal leaves a fifth of it to retry in. */
export const RENEW_AT_SHARE = 0.8;

/**
 * 32 random bytes (256 bits), base64url: the callback's path segment. It is the only thing that
 * routes a verification or a push to a subscription, so it must not be guessable; the signature
 * then proves a push came from the hub that holds the secret.
 */
export function newToken(): string {
  return randomBytes(32).toString("base64url");
}

/** hub.secret: 32 random bytes as 43 base64url characters (the recommendation caps it at 200 bytes). */
export function newSecret(): string {
  return randomBytes(32).toString("base64url");
}

/** <base>/api/websub/<token>, whatever path the public base has. */
export function callbackUrl(base: string, token: string): string {
  return `${base.replace(/\/+$/, "")}/api/websub/${encodeURIComponent(token)}`;
}

export function subscriptionByToken(db: Database, token: string) {
  return db.prisma.websubSubscription.findUnique({ where: { token } });
}

/**
 * Whether a hub pushes this source now: a verified subscription whose lease has not run out.
 * The fetch stage polls such a feed more slowly (lib/schedule/nextPoll.ts, `pushed`).
 */
export async function pushIsLive(
  db: Database,
  sourceId: string,
  now = new Date(),
): Promise<boolean> {
  const row = await db.prisma.websubSubscription.findUnique({
    where: { sourceId },
    select: { state: true, expiresAt: true },
  });
  return row?.state === "active" && row.expiresAt !== null && row.expiresAt > now;
}

/**
 * Counts a refused push on its subscription (reason and detail of the last one kept). One
 * statement, so racing pushes each count.
 */
export async function recordRejectedPush(
  db: Database,
  token: string,
  reason: string,
  detail: string,
): Promise<void> {
  await db.prisma.$executeRaw`
    UPDATE websub_subscriptions
    SET rejected_pushes = rejected_pushes + 1, last_rejected_at = now(),
        last_rejection = ${`${reason}: ${detail}`.slice(0, 500)}, updated_at = now()
    WHERE token = ${token}`;
}

export async function recordPush(db: Database, token: string): Promise<void> {
  await db.prisma.$executeRaw`
    UPDATE websub_subscriptions
    SET pushes = pushes + 1, last_push_at = now(), updated_at = now()
    WHERE token = ${token}`;
}
