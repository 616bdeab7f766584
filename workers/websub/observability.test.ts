// What WebSub lets an operator see: every push, verification and renewal counted by outcome
// (lib/metrics), the turns worth a look on the Audit page (a bad signature, a denial, a failed
// subscription), and a push that brought news counted as the source's content arrival, not as a
// poll. On PostgreSQL when TEST_DATABASE_URL is set, else PGlite.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Database } from "@/lib/db";
import { registerMetrics, scrape } from "@/lib/metrics";
import { createTestDatabase, type TestDatabase } from "@/lib/testing/db";
import { WEBSUB_ACTOR, WEBSUB_AUDIT_ACTIONS } from "./audit";
import type { HubAnswer } from "./hubRequest";
import { maintainSubscriptions } from "./maintain";
import { PUSH_COLLECTOR, PUSH_MAX_BYTES, receivePush } from "./receivePush";
import { sign } from "./signature";
import { newSecret, newToken } from "./subscriptions";
import { verifyIntent } from "./verifyIntent";

const TOPIC = "https://feeds.example/rss";
const HUB = "https://hub.example/";
let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
  (globalThis as unknown as { wirewatchDb?: Promise<Database> }).wirewatchDb = Promise.resolve(db);
  registerMetrics();
  await db.prisma.source.create({ data: { id: "s", name: "S", kind: "feed", url: TOPIC } });
});
afterAll(() => db?.drop());

/** One series' value in this process's exposition (0 when it is not there yet). */
async function metric(series: string, withDatabase = false): Promise<number> {
  const { body } = await scrape(withDatabase ? { database: async () => db } : {});
  const line = body.split("\n").find((l) => l.startsWith(`${series} `));
  return line === undefined ? 0 : Number(line.slice(series.length + 1));
}

const pushes = (outcome: string) =>
  metric(`wirewatch_websub_pushes_total{source="s",outcome="${outcome}"}`);
const verifications = (mode: string, outcome: string) =>
  metric(`wirewatch_websub_verifications_total{mode="${mode}",outcome="${outcome}"}`);
const renewals = (outcome: string) =>
  metric(`wirewatch_websub_lease_renewals_total{outcome="${outcome}"}`);
const audits = (action: string) =>
  db.prisma.adminAudit.findMany({ where: { action }, orderBy: { id: "asc" } });
const row = () => db.prisma.websubSubscription.findUniqueOrThrow({ where: { sourceId: "s" } });

async function subscription(
  state: string,
  pendingMode: string | null,
  extra: { renewAt?: Date; requestedAt?: Date } = {},
) {
  const token = newToken();
  const secret = newSecret();
  const data = {
    state,
    pendingMode,
    hub: HUB,
    topic: TOPIC,
    token,
    secret,
    leaseSeconds: 600,
    expiresAt: state === "active" ? new Date(Date.now() + 3_600_000) : null,
    renewAt: extra.renewAt ?? null,
    requestedAt: extra.requestedAt ?? null,
    rejectedPushes: 0n,
    pushes: 0n,
  };
  await db.prisma.websubSubscription.upsert({
    where: { sourceId: "s" },
    create: { sourceId: "s", ...data },
    update: data,
  });
  return { token, secret };
}

const feed = (guid: string) =>
  Buffer.from(
    `<rss version="2.0"><channel><title>t</title><item><title>Pushed ${guid}</title><guid>${guid}</guid></item></channel></rss>`,
  );
const push = (body: Buffer, signature: string | null) => ({
  headers: new Headers({
    "content-type": "application/rss+xml",
    ...(signature ? { "x-hub-signature": signature } : {}),
  }),
  body,
});

describe("a refused push", () => {
  it("a bad signature: 403, nothing written, counted, on the Audit page once per 10 minutes and reason", async () => {
    const { token, secret } = await subscription("active", null);
    const before = await pushes("bad_signature");
    const body = feed("forged");
    const forged = await receivePush(db, token, push(body, sign(`${secret}x`, body)));
    expect(forged).toMatchObject({ status: 403, body: { reason: "bad_signature" } });
    expect(await pushes("bad_signature")).toBe(before + 1);
    expect(Number((await row()).rejectedPushes)).toBe(1);
    expect(await db.prisma.news.count()).toBe(0);
    const [audit, ...more] = await audits(WEBSUB_AUDIT_ACTIONS.pushRefused);
    expect(more).toEqual([]);
    expect(audit).toMatchObject({
      actor: WEBSUB_ACTOR,
      target: { sourceId: "s", hub: HUB },
      affected: 1,
      detail: { reason: "bad_signature", message: "X-Hub-Signature does not match the body" },
    });

    // The same refusal again within 10 minutes: counted, not another row; another reason is.
    await receivePush(db, token, push(body, sign(`${secret}x`, body)));
    await receivePush(db, token, push(body, null));
    expect(await pushes("bad_signature")).toBe(before + 2);
    expect(await pushes("missing_signature")).toBeGreaterThanOrEqual(1);
    expect(Number((await row()).rejectedPushes)).toBe(3);
    expect(
      (await audits(WEBSUB_AUDIT_ACTIONS.pushRefused)).map(
        (a) => (a.detail as { reason: string }).reason,
      ),
    ).toEqual(["bad_signature", "missing_signature"]);
    // The totals kept on the row are what the alert reads (whichever process answered).
    expect(await metric('wirewatch_websub_rejected_pushes_total{source="s"}', true)).toBe(3);
  });

  it("a body that is no feed, or over 10 MiB, is counted and recorded; a stranger's callback only counted", async () => {
    const { token, secret } = await subscription("active", null);
    const html = Buffer.from("<html><body>not a feed</body></html>");
    expect((await receivePush(db, token, push(html, sign(secret, html)))).status).toBe(400);
    expect(await pushes("parse_error")).toBe(1);

    // Through the route, as a hub posts: the body is cut off past the cap, before any parsing.
    const { POST } = await import("@/app/api/websub/[token]/route");
    const post = (callback: string, body: Buffer) =>
      POST(
        new Request(`http://localhost/api/websub/${callback}`, {
          method: "POST",
          body: new Uint8Array(body),
        }),
        { params: Promise.resolve({ token: callback }) },
      );
    expect((await post(token, Buffer.alloc(PUSH_MAX_BYTES + 1))).status).toBe(413);
    expect(await pushes("too_large")).toBe(1);
    expect(Number((await row()).rejectedPushes)).toBe(2);
    expect((await row()).lastRejection).toMatch(/^too_large: the push body is over 10485760 bytes/);
    const reasons = (await audits(WEBSUB_AUDIT_ACTIONS.pushRefused)).map(
      (a) => (a.detail as { reason: string }).reason,
    );
    expect(reasons).toEqual(expect.arrayContaining(["parse_error", "too_large"]));

    // Tokens nobody was given: counted under "unknown", no row, no audit.
    const audited = (await audits(WEBSUB_AUDIT_ACTIONS.pushRefused)).length;
    const stranger = await metric(
      'wirewatch_websub_pushes_total{source="unknown",outcome="unknown_callback"}',
    );
    expect((await post(newToken(), feed("x"))).status).toBe(404);
    expect((await post("not-a-token", feed("x"))).status).toBe(404);
    expect(
      await metric('wirewatch_websub_pushes_total{source="unknown",outcome="unknown_callback"}'),
    ).toBe(stranger + 2);
    expect(await audits(WEBSUB_AUDIT_ACTIONS.pushRefused)).toHaveLength(audited);
  });
});

describe("an accepted push", () => {
  it("is counted and timed, and its news is content arrival for the websub collector, not a poll", async () => {
    const { token, secret } = await subscription("active", null);
    const before = {
      accepted: await pushes("accepted"),
      timed: await metric("wirewatch_websub_push_store_seconds_count"),
    };
    const body = feed("g1");
    const answer = await receivePush(db, token, push(body, sign(secret, body)));
    expect(answer).toMatchObject({ status: 200, body: { entries: 1, changed: 1 } });
    expect(await pushes("accepted")).toBe(before.accepted + 1);
    expect(await metric("wirewatch_websub_push_store_seconds_count")).toBe(before.timed + 1);
    expect(await metric("wirewatch_websub_push_store_seconds_sum")).toBeGreaterThan(0);

    const status = await db.prisma.collectorStatus.findUniqueOrThrow({
      where: { sourceId_collector: { sourceId: "s", collector: PUSH_COLLECTOR } },
    });
    expect(status).toMatchObject({ connected: true, lastActivityKind: "content" });
    expect(status.lastContentAt).not.toBeNull();
    // Not a poll: no fetch attempt, no poll time, no breaker state, no collector A.
    expect(await db.prisma.fetchAttempt.count({ where: { sourceId: "s" } })).toBe(0);
    expect(await db.prisma.sourceState.findUnique({ where: { sourceId: "s" } })).toBeNull();
    expect(await db.prisma.collectorStatus.count({ where: { sourceId: "s" } })).toBe(1);

    // The same document again (a hub's retry, or a poll that got there first): accepted,
    // nothing changed, so no news arrived.
    const again = await receivePush(db, token, push(body, sign(secret, body)));
    expect(again).toMatchObject({ status: 200, body: { changed: 0 } });
    const after = await db.prisma.collectorStatus.findUniqueOrThrow({
      where: { sourceId_collector: { sourceId: "s", collector: PUSH_COLLECTOR } },
    });
    expect(after.lastContentAt).toEqual(status.lastContentAt);
    expect(Number((await row()).pushes)).toBe(2);
  });

  it("a write that fails is counted as not_written, untimed, and not as news", async () => {
    const { token, secret } = await subscription("active", null);
    const timed = await metric("wirewatch_websub_push_store_seconds_count");
    const body = feed("g2");
    const answer = await receivePush(db, token, push(body, sign(secret, body)), async () => {
      throw new Error("database away");
    });
    expect(answer.status).toBe(503);
    expect(await pushes("not_written")).toBe(1);
    expect(await metric("wirewatch_websub_push_store_seconds_count")).toBe(timed);
  });
});

describe("verifications", () => {
  const verify = (token: string, mode: string, extra: Record<string, string> = {}) =>
    verifyIntent(
      db,
      token,
      new URLSearchParams({
        "hub.mode": mode,
        "hub.topic": TOPIC,
        "hub.challenge": "c-1",
        "hub.lease_seconds": "600",
        ...extra,
      }),
    );

  it("a new subscription verified: counted and recorded; a renewal verified: counted as renewed", async () => {
    const verified = await verifications("subscribe", "verified");
    const renewed = await renewals("renewed");
    const { token } = await subscription("pending", "subscribe");
    expect((await verify(token, "subscribe")).status).toBe(200);
    expect(await verifications("subscribe", "verified")).toBe(verified + 1);
    expect(await audits(WEBSUB_AUDIT_ACTIONS.subscribed)).toEqual([
      expect.objectContaining({
        actor: WEBSUB_ACTOR,
        target: { sourceId: "s", hub: HUB },
        detail: { topic: TOPIC, leaseSeconds: 600 },
      }),
    ]);
    expect(await renewals("renewed")).toBe(renewed);

    // Upkeep asks again at 80 % (same token): the hub's verification is a renewal.
    await db.prisma.websubSubscription.update({
      where: { sourceId: "s" },
      data: { pendingMode: "subscribe" },
    });
    expect((await verify(token, "subscribe")).status).toBe(200);
    expect(await renewals("renewed")).toBe(renewed + 1);
    expect(await verifications("subscribe", "verified")).toBe(verified + 2);
    expect(await audits(WEBSUB_AUDIT_ACTIONS.subscribed)).toHaveLength(1);

    // A replay finds nothing pending: refused, counted, nothing recorded.
    const refused = await verifications("subscribe", "refused");
    expect((await verify(token, "subscribe")).status).toBe(404);
    expect(await verifications("subscribe", "refused")).toBe(refused + 1);
  });

  it("a denial is counted and recorded with the hub's reason; an unsubscription too", async () => {
    const denied = await verifications("subscribe", "denied");
    const { token } = await subscription("pending", "subscribe");
    expect((await verify(token, "denied", { "hub.reason": "over quota" })).status).toBe(200);
    expect(await verifications("subscribe", "denied")).toBe(denied + 1);
    expect(await audits(WEBSUB_AUDIT_ACTIONS.denied)).toEqual([
      expect.objectContaining({
        actor: WEBSUB_ACTOR,
        target: { sourceId: "s", hub: HUB },
        detail: { reason: "over quota", topic: TOPIC },
      }),
    ]);

    const unsubscribed = await verifications("unsubscribe", "verified");
    const active = await subscription("unsubscribing", "unsubscribe");
    expect((await verify(active.token, "unsubscribe")).status).toBe(200);
    expect(await verifications("unsubscribe", "verified")).toBe(unsubscribed + 1);
    expect(await audits(WEBSUB_AUDIT_ACTIONS.unsubscribed)).toEqual([
      expect.objectContaining({ detail: { topic: TOPIC, verified: true } }),
    ]);
  });
});

describe("upkeep", () => {
  let hubAnswer: () => Promise<HubAnswer> = async () => ({ status: 202, detail: "" });
  const round = (now = new Date()) =>
    maintainSubscriptions(db, {
      callbackBase: "https://news.example.com",
      leaseSeconds: 600,
      now,
      discover: async () => ({ hub: HUB, self: TOPIC }),
      askHub: () => hubAnswer(),
    });

  it("counts a renewal the hub refuses, cannot be reached for, or never verifies", async () => {
    await db.prisma.source.update({ where: { id: "s" }, data: { enabled: true } });
    await subscription("active", null, { renewAt: new Date(Date.now() - 1000) });
    const before = {
      refused: await renewals("refused"),
      unreachable: await renewals("unreachable"),
      unverified: await renewals("unverified"),
      failed: await verifications("subscribe", "failed"),
    };
    hubAnswer = async () => ({ status: 503, detail: "busy" });
    expect(await round()).toMatchObject({ renewed: 0, failed: 1 });
    expect(await renewals("refused")).toBe(before.refused + 1);
    expect(await row()).toMatchObject({ state: "active", pendingMode: null });

    hubAnswer = async () => {
      throw new Error("connection refused");
    };
    await round();
    expect(await renewals("unreachable")).toBe(before.unreachable + 1);

    // Accepted, then no verification within 10 minutes.
    hubAnswer = async () => ({ status: 202, detail: "" });
    const asked = new Date();
    expect(await round(asked)).toMatchObject({ renewed: 1 });
    await round(new Date(asked.getTime() + 11 * 60_000));
    expect(await renewals("unverified")).toBe(before.unverified + 1);
    expect(await verifications("subscribe", "failed")).toBe(before.failed + 1);
    expect(await row()).toMatchObject({
      state: "active",
      lastError: "the hub did not verify the renewal",
    });
    // Renewals are routine: none of this is on the Audit page.
    expect(await audits(WEBSUB_AUDIT_ACTIONS.failed)).toEqual([]);
  });

  it("records a first subscription that fails once a day, however often it is retried", async () => {
    const failed = await verifications("subscribe", "failed");
    await subscription("pending", "subscribe", { requestedAt: new Date(Date.now() - 11 * 60_000) });
    expect(await round()).toMatchObject({ failed: 1 });
    expect(await verifications("subscribe", "failed")).toBe(failed + 1);
    expect(await audits(WEBSUB_AUDIT_ACTIONS.failed)).toEqual([
      expect.objectContaining({
        actor: WEBSUB_ACTOR,
        target: { sourceId: "s", hub: HUB },
        detail: {
          reason: "unverified",
          message: "the hub did not verify intent within 10 minutes",
        },
      }),
    ]);
    // The same again (an hour later, say): counted, not another row.
    await subscription("pending", "subscribe", { requestedAt: new Date(Date.now() - 11 * 60_000) });
    await round();
    expect(await verifications("subscribe", "failed")).toBe(failed + 2);
    expect(await audits(WEBSUB_AUDIT_ACTIONS.failed)).toHaveLength(1);

    // The hub refusing the request is another reason: one row for it.
    await db.prisma.websubSubscription.delete({ where: { sourceId: "s" } });
    hubAnswer = async () => ({ status: 400, detail: "bad topic" });
    expect(await round()).toMatchObject({ checked: 1, failed: 1 });
    expect((await audits(WEBSUB_AUDIT_ACTIONS.failed)).at(-1)).toMatchObject({
      detail: { reason: "hub_refused", message: "hub answered 400: bad topic" },
    });
  });
});
