// WebSub end to end: the simulator's hub against the real callback route handler
// (app/api/websub/[token]/route.ts, served by a small HTTP adapter) and the real writer on an
// embedded database: subscribe, verify, a signed push stored, a bad or missing signature refused
// and counted, renewal before expiry, polling 4× slower while pushed, unsubscribe when paused.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Database } from "@/lib/db";
import { createTestDatabase, type TestDatabase } from "@/lib/testing/db";
import { type Simulator, startSimulator } from "@/simulator/server";
import { HUB_CHECK_MS } from "@/simulator/websub";
import { OutageWatch } from "@/workers/fetcher/outage";
import { RateBudget } from "@/workers/fetcher/rateBudget";
import type { ClaimedJob } from "@/workers/queue/types";
import { fetchStage } from "@/workers/stages/fetchStage";
import { FETCH_QUEUE, syncFrontier } from "@/workers/stages/frontier";
import { writeBatch } from "@/workers/store";
import { maintainSubscriptions } from "./maintain";
import { sign } from "./signature";
import { type CallbackServer, startCallbackServer } from "./testing/callbackServer";

const SOURCE = "harbour-rss";
const LEASE = 600;

let db: TestDatabase;
let sim: Simulator;
let callbackServer: CallbackServer;
let base: string;

const row = () => db.prisma.websubSubscription.findUniqueOrThrow({ where: { sourceId: SOURCE } });
const stored = (title: string) => db.prisma.news.count({ where: { sourceId: SOURCE, title } });
const maintain = (now?: Date) =>
  maintainSubscriptions(db, { callbackBase: base, leaseSeconds: LEASE, ...(now ? { now } : {}) });

/** Publishes a story at the outlet and lets the hub look once (a push, when subscribed). */
async function publish(title: string) {
  sim.control.advance(1_000);
  sim.control.publish({ outlet: "harbour", title });
  sim.control.advance(HUB_CHECK_MS);
  await sim.websub?.settled();
}

beforeAll(async () => {
  db = await createTestDatabase({ embedded: true });
  (globalThis as unknown as { wirewatchDb?: Promise<Database> }).wirewatchDb = Promise.resolve(db);
  sim = await startSimulator({
    manual: true,
    websubHub: true,
    seed: 17,
    ratePerMinute: 0,
    burstEveryMs: 0,
  });
  callbackServer = await startCallbackServer();
  base = callbackServer.url;
  const feed = sim.sources().find((s) => s.id === SOURCE);
  if (!feed) throw new Error(`the simulator has no ${SOURCE}`);
  await db.prisma.source.create({
    data: {
      id: feed.id,
      name: feed.name,
      kind: "feed",
      url: feed.url,
      allowPrivate: true,
      collectors: ["A"],
      pollIntervalSeconds: 30,
    },
  });
}, 60_000);

afterAll(async () => {
  await sim?.stop();
  await callbackServer?.close();
  await db?.drop();
});

describe("WebSub through the simulator's hub", () => {
  it("discovers the hub, subscribes, and confirms the hub's intent verification", async () => {
    const summary = await maintain();
    expect(summary).toMatchObject({ checked: 1, subscribed: 1, failed: 0 });
    await sim.websub?.settled();
    const sub = await row();
    expect(sub).toMatchObject({
      state: "active",
      pendingMode: null,
      hub: `${sim.url}/hub`,
      topic: `${sim.url}/s/${SOURCE}/feed.xml`,
      leaseSeconds: LEASE,
    });
    expect(sub.token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const lease = (sub.expiresAt?.getTime() ?? 0) - (sub.verifiedAt?.getTime() ?? 0);
    expect(lease).toBe(LEASE * 1000);
    expect(sim.websub?.subscriptions()).toEqual([
      expect.objectContaining({
        topic: sub.topic,
        callback: `${base}/api/websub/${sub.token}`,
        leaseSeconds: LEASE,
      }),
    ]);
    expect(sim.websub?.stats.verified).toBe(1);
  });

  it("echoes no challenge for a topic, mode or token it did not ask for (404)", async () => {
    const sub = await row();
    const verify = (token: string, params: Record<string, string>) =>
      fetch(`${base}/api/websub/${token}?${new URLSearchParams(params)}`);
    const ask = {
      "hub.topic": sub.topic as string,
      "hub.challenge": "c1",
      "hub.lease_seconds": "60",
    };
    // Nothing is pending now: a replayed or forged verification confirms nothing.
    expect((await verify(sub.token as string, { ...ask, "hub.mode": "subscribe" })).status).toBe(
      404,
    );
    expect((await verify(sub.token as string, { ...ask, "hub.mode": "unsubscribe" })).status).toBe(
      404,
    );
    const other = { ...ask, "hub.mode": "subscribe", "hub.topic": "https://evil.example/feed" };
    expect((await verify(sub.token as string, other)).status).toBe(404);
    expect((await verify("A".repeat(43), { ...ask, "hub.mode": "subscribe" })).status).toBe(404);
    expect(await row()).toMatchObject({ state: "active", leaseSeconds: LEASE });
  });

  it("stores a signed push through the writer, as a poll of the same feed would", async () => {
    await publish("Harbour cranes stop for the storm");
    expect(await stored("Harbour cranes stop for the storm")).toBe(1);
    const event = await db.prisma.newsEvent.findFirstOrThrow({
      where: { sourceId: SOURCE, collector: "websub" },
    });
    expect(event.origin).toBe("poll");
    expect(Number((await row()).pushes)).toBe(1);
    expect(sim.websub?.subscriptions()[0]?.lastPushStatus).toBe(200);
  });

  it("refuses a push with a bad or missing signature: nothing written, counted", async () => {
    sim.websub?.fault("bad-signature");
    await publish("Forged: the harbour is closed for a year");
    expect(sim.websub?.subscriptions()[0]?.lastPushStatus).toBe(403);
    expect(await stored("Forged: the harbour is closed for a year")).toBe(0);
    let sub = await row();
    expect(Number(sub.rejectedPushes)).toBe(1);
    expect(sub.lastRejection).toMatch(/^bad_signature/);

    sim.websub?.fault("no-signature");
    await publish("Unsigned: ferries cancelled");
    expect(sim.websub?.subscriptions()[0]?.lastPushStatus).toBe(403);
    expect(await stored("Unsigned: ferries cancelled")).toBe(0);
    sub = await row();
    expect(Number(sub.rejectedPushes)).toBe(2);
    expect(sub.lastRejection).toMatch(/^missing_signature/);
    expect(Number(sub.pushes)).toBe(1);

    // Signed again: the next push carries the whole feed, the stories refused before included.
    sim.websub?.fault(null);
    await publish("Ferries resume at noon");
    expect(await stored("Ferries resume at noon")).toBe(1);
    expect(await stored("Unsigned: ferries cancelled")).toBe(1);
  });

  it("polls the pushed feed 4× less often (30 s → about 120 s)", async () => {
    await syncFrontier(db);
    const job = await db.prisma.job.findFirstOrThrow({
      where: { queue: FETCH_QUEUE, sourceId: SOURCE },
    });
    const stage = fetchStage(db, (deliveries) => writeBatch(db, deliveries), {
      fetch: {
        robots: false,
        deps: {
          sleep: async () => {},
          rateBudget: new RateBudget({ ratePerSecond: 1_000, burst: 1_000 }),
          outage: new OutageWatch(),
        },
      },
    });
    const poll = () =>
      stage.handler(
        {
          queue: FETCH_QUEUE,
          key: job.key,
          sourceId: SOURCE,
          payload: job.payload,
        } as unknown as ClaimedJob,
        { signal: new AbortController().signal },
      );
    const pushed = await poll();
    // 30 s × 4 ± 10 % jitter, less the poll's own duration.
    expect(pushed?.reschedule.delaySeconds).toBeGreaterThanOrEqual(100);
    expect(pushed?.reschedule.delaySeconds).toBeLessThanOrEqual(132);

    // Without a live subscription the same feed is polled at its interval again.
    const sub = await row();
    await db.prisma.websubSubscription.update({
      where: { sourceId: SOURCE },
      data: { expiresAt: new Date(Date.now() - 1000) },
    });
    const polled = await poll();
    expect(polled?.reschedule.delaySeconds).toBeLessThanOrEqual(33);
    await db.prisma.websubSubscription.update({
      where: { sourceId: SOURCE },
      data: { expiresAt: sub.expiresAt },
    });
  });

  it("renews at 80 % of the lease, with the same callback and secret, before it runs out", async () => {
    const before = await row();
    const hubBefore = sim.websub?.subscriptions()[0]?.expiresAt ?? 0;
    const renewAt = before.renewAt?.getTime() ?? 0;
    expect(renewAt - (before.verifiedAt?.getTime() ?? 0)).toBe(LEASE * 1000 * 0.8);

    // Just before 80 %: nothing to do.
    expect((await maintain(new Date(renewAt - 1000))).renewed).toBe(0);
    sim.control.advance(LEASE * 1000 * 0.8);
    const summary = await maintain(new Date(renewAt + 1000));
    expect(summary).toMatchObject({ renewed: 1, subscribed: 0, failed: 0 });
    await sim.websub?.settled();
    const after = await row();
    expect(after).toMatchObject({
      state: "active",
      pendingMode: null,
      token: before.token,
      secret: before.secret,
    });
    expect(after.verifiedAt?.getTime()).toBeGreaterThan(before.verifiedAt?.getTime() ?? 0);
    expect(sim.websub?.subscriptions()).toHaveLength(1);
    expect(sim.websub?.subscriptions()[0]?.expiresAt).toBeGreaterThan(hubBefore);
    // Past the old lease (simulated), the renewed subscription still pushes.
    sim.control.advance(LEASE * 1000 * 0.3);
    await publish("Renewed: harbour pilots back at work");
    expect(await stored("Renewed: harbour pilots back at work")).toBe(1);
  });

  it("unsubscribes when the source is paused; a push after that is refused (410)", async () => {
    const sub = await row();
    await db.prisma.source.update({ where: { id: SOURCE }, data: { enabled: false } });
    const summary = await maintain();
    expect(summary.unsubscribed).toBe(1);
    await sim.websub?.settled();
    expect(await row()).toMatchObject({ state: "unsubscribed", pendingMode: null });
    expect(sim.websub?.subscriptions()).toEqual([]);
    expect(sim.websub?.stats.unsubscribed).toBe(1);

    const body = Buffer.from("<rss version='2.0'><channel><title>x</title></channel></rss>");
    const late = await fetch(`${base}/api/websub/${sub.token}`, {
      method: "POST",
      headers: {
        "content-type": "application/rss+xml",
        "x-hub-signature": sign(sub.secret as string, body),
      },
      body,
    });
    expect(late.status).toBe(410);
    // Nothing more to do on the next round.
    expect(await maintain()).toMatchObject({ checked: 0, unsubscribed: 0 });
  });
});
