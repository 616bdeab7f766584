import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "@/lib/testing/db";
import type { StoryEvent } from "./events";
import { receiveWebhook } from "./receiveWebhook";
import { forgetCachedStorySources, loadStorySource } from "./source";
import { SECRET_A, SECRET_B, signedDelivery } from "./testing/signing";

const now = () => Math.floor(Date.now() / 1000);
/**
 * Timestamps are whole seconds: signing at the end of one second and verifying in the next moves
 * the skew by one. Starting early in a second keeps ±301 and ±299 what they say.
 */
async function earlyInASecond(): Promise<number> {
  const ms = Date.now() % 1000;
  if (ms > 500) await new Promise((r) => setTimeout(r, 1005 - ms));
  return now();
}

function created(id: string, ticker = "ACME", at = new Date()): StoryEvent {
  const iso = at.toISOString();
  return {
    id,
    type: "story.created",
    created_at: iso,
    ticker,
    data: {
      story: {
        id: `st_${id}`,
        ticker,
        version: 1,
        title: "Acme buys Initech",
        strong: false,
        articles: [],
        created_at: iso,
        updated_at: iso,
      },
    },
  };
}

describe("POST /api/webhooks/stories: verification and idempotency", () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase();
    await db.prisma.source.create({
      data: {
        id: "desk",
        name: "Desk",
        kind: "story-api",
        url: "http://127.0.0.1:9/stories-api",
        tickers: ["ACME"],
        storyMode: "snapshot",
        webhookSecrets: [SECRET_A],
      },
    });
    await loadStorySource(db, "desk"); // follows ACME from now
  });
  afterAll(() => db?.drop());

  const rejections = async () =>
    Object.fromEntries(
      (await db.prisma.storyWebhookRejection.findMany()).map((r) => [r.reason, Number(r.count)]),
    );
  const jobs = () =>
    db.prisma.job.count({ where: { queue: "story", key: { startsWith: "event:" } } });

  it("records a signed event once and queues its work; a replay is a duplicate", async () => {
    const delivery = signedDelivery(created("evt_1"), [SECRET_A]);
    const first = await receiveWebhook(db, delivery);
    expect(first).toMatchObject({ status: 200, body: { outcome: "accepted", eventId: "evt_1" } });
    expect(await jobs()).toBe(1);
    // The same id again (a sender retry, or a replay): 200, nothing new queued, counted.
    const again = await receiveWebhook(db, signedDelivery(created("evt_1"), [SECRET_A]));
    expect(again).toMatchObject({
      status: 200,
      body: { outcome: "duplicate", reason: "replayed_id" },
    });
    expect(await jobs()).toBe(1);
    const row = await db.prisma.storyEvent.findUniqueOrThrow({
      where: { sourceId_eventId: { sourceId: "desk", eventId: "evt_1" } },
    });
    expect(row).toMatchObject({ type: "story.created", ticker: "ACME", webhookDeliveries: 2 });
  });

  it("refuses forged, tampered and stale deliveries with recorded reasons", async () => {
    const forged = signedDelivery(created("evt_f"), [SECRET_B]);
    expect(await receiveWebhook(db, forged)).toMatchObject({
      status: 401,
      body: { outcome: "rejected", reason: "bad_signature" },
    });

    const tampered = signedDelivery(created("evt_t"), [SECRET_A]);
    const flipAt = tampered.body.indexOf("Initech");
    tampered.body[flipAt] = (tampered.body[flipAt] as number) ^ 0x01; // one flipped bit in one byte
    expect(await receiveWebhook(db, tampered)).toMatchObject({
      status: 401,
      body: { reason: "bad_signature" },
    });

    const old = await receiveWebhook(
      db,
      signedDelivery(created("evt_o"), [SECRET_A], (await earlyInASecond()) - 301),
    );
    expect(old).toMatchObject({ status: 401, body: { reason: "stale_timestamp" } });
    expect(old.body.message).toMatch(/30[12] s old \(tolerance 300 s\)/);
    const future = await receiveWebhook(
      db,
      signedDelivery(created("evt_n"), [SECRET_A], (await earlyInASecond()) + 301),
    );
    expect(future).toMatchObject({ status: 401, body: { reason: "future_timestamp" } });

    const unsigned = signedDelivery(created("evt_u"), [SECRET_A]);
    unsigned.headers.delete("webhook-signature");
    expect(await receiveWebhook(db, unsigned)).toMatchObject({
      status: 401,
      body: { reason: "missing_headers" },
    });

    expect(await rejections()).toEqual({
      bad_signature: 2,
      stale_timestamp: 1,
      future_timestamp: 1,
      missing_headers: 1,
    });
    const last = await db.prisma.storyWebhookRejection.findUniqueOrThrow({
      where: { sourceId_reason: { sourceId: "desk", reason: "bad_signature" } },
    });
    expect(last).toMatchObject({
      lastWebhookId: "evt_t",
      lastDetail: expect.stringMatching(/no signature/),
    });
    // Nothing refused was recorded as an event or queued.
    expect(
      await db.prisma.storyEvent.count({
        where: { eventId: { in: ["evt_f", "evt_t", "evt_o", "evt_n", "evt_u"] } },
      }),
    ).toBe(0);
  });

  it("accepts ±299 s of clock skew", async () => {
    for (const [id, skew] of [
      ["evt_p", 299],
      ["evt_m", -299],
    ] as const) {
      const answer = await receiveWebhook(
        db,
        signedDelivery(created(id), [SECRET_A], (await earlyInASecond()) + skew),
      );
      expect(answer, `skew ${skew}`).toMatchObject({ status: 200, body: { outcome: "accepted" } });
    }
  });

  it("accepts either secret while one is rotated", async () => {
    await db.prisma.source.update({
      where: { id: "desk" },
      data: { webhookSecrets: [SECRET_A, SECRET_B] },
    });
    forgetCachedStorySources(db);
    expect(await receiveWebhook(db, signedDelivery(created("evt_r1"), [SECRET_B]))).toMatchObject({
      status: 200,
    });
    // A sender signing with both during its own rotation: one valid signature is enough.
    expect(
      await receiveWebhook(db, signedDelivery(created("evt_r2"), [SECRET_B, SECRET_A])),
    ).toMatchObject({
      status: 200,
    });
    await db.prisma.source.update({ where: { id: "desk" }, data: { webhookSecrets: [SECRET_B] } });
    forgetCachedStorySources(db);
    expect(await receiveWebhook(db, signedDelivery(created("evt_r3"), [SECRET_A]))).toMatchObject({
      status: 401,
    });
    await db.prisma.source.update({ where: { id: "desk" }, data: { webhookSecrets: [SECRET_A] } });
    forgetCachedStorySources(db);
  });

  it("answers malformed events, unknown types, unfollowed tickers and unknown sources clearly", async () => {
    const bad = signedDelivery(
      { id: "evt_b", type: "story.created", created_at: "yesterday" } as never,
      [SECRET_A],
    );
    const answer = await receiveWebhook(db, bad);
    expect(answer).toMatchObject({ status: 400, body: { reason: "malformed_event" } });
    expect(answer.body.message).toMatch(/created_at/);

    const raw = Buffer.from("{not json");
    const signed = signedDelivery({ id: "evt_j" }, [SECRET_A]);
    signed.headers.set("webhook-signature", new Webhook(SECRET_A).sign("evt_j", new Date(), raw));
    signed.headers.set("webhook-timestamp", String(now()));
    expect(await receiveWebhook(db, { headers: signed.headers, body: raw })).toMatchObject({
      status: 400,
      body: { reason: "malformed_event", message: expect.stringMatching(/not JSON/) },
    });

    const future = { ...created("evt_x"), type: "story.renamed" };
    expect(await receiveWebhook(db, signedDelivery(future, [SECRET_A]))).toMatchObject({
      status: 200,
      body: { outcome: "ignored" },
    });
    expect(
      await receiveWebhook(db, signedDelivery(created("evt_g", "GLOBX"), [SECRET_A])),
    ).toMatchObject({
      status: 200,
      body: { outcome: "ignored", message: "ticker GLOBX is not followed" },
    });
    // History: published before ACME was followed (the ticker's one-time load covers it).
    const before = signedDelivery(created("evt_h", "ACME", new Date(Date.now() - 3_600_000)), [
      SECRET_A,
    ]);
    expect(await receiveWebhook(db, before)).toMatchObject({
      status: 200,
      body: { outcome: "ignored", message: "published before ACME was followed" },
    });
    const mismatch = signedDelivery(created("evt_y"), [SECRET_A], now(), "evt_other");
    expect(await receiveWebhook(db, mismatch)).toMatchObject({
      status: 400,
      body: { reason: "malformed_event" },
    });
    expect(
      await receiveWebhook(db, {
        ...signedDelivery(created("evt_s"), [SECRET_A]),
        sourceId: "nope",
      }),
    ).toMatchObject({ status: 404, body: { reason: "unknown_source" } });
  });

  it("a ticker added in another process is followed at once, not a second later", async () => {
    // This process remembers the source following ACME only…
    expect(await receiveWebhook(db, signedDelivery(created("evt_a1"), [SECRET_A]))).toMatchObject({
      status: 200,
    });
    // …when the sources file sync in another process adds UMBRA.
    await db.prisma.source.update({ where: { id: "desk" }, data: { tickers: ["ACME", "UMBRA"] } });
    await loadStorySource(db, "desk");
    const umbra = signedDelivery(created("evt_u1", "UMBRA", new Date(Date.now() + 5)), [SECRET_A]);
    await new Promise((r) => setTimeout(r, 10));
    expect(await receiveWebhook(db, umbra)).toMatchObject({
      status: 200,
      body: { outcome: "accepted" },
    });
    await db.prisma.source.update({ where: { id: "desk" }, data: { tickers: ["ACME"] } });
    forgetCachedStorySources(db);
  });

  it("answers 503 while the source is paused, so the sender comes back after the resume", async () => {
    await db.prisma.sourceState.create({
      data: { sourceId: "desk", disabledReason: "paused by admin", disabledAt: new Date() },
    });
    forgetCachedStorySources(db);
    expect(await receiveWebhook(db, signedDelivery(created("evt_z"), [SECRET_A]))).toMatchObject({
      status: 503,
      body: { outcome: "failed", reason: "paused" },
    });
    await db.prisma.sourceState.delete({ where: { sourceId: "desk" } });
    forgetCachedStorySources(db);
    expect(await receiveWebhook(db, signedDelivery(created("evt_z"), [SECRET_A]))).toMatchObject({
      status: 200,
      body: { outcome: "accepted" },
    });
  });

  it("answers 503 when the event cannot be recorded, so the sender retries", async () => {
    const broken = {
      ...db,
      prisma: new Proxy(db.prisma, {
        get(target, key) {
          if (key === "$queryRaw") return () => Promise.reject(new Error("connection refused"));
          return Reflect.get(target, key);
        },
      }),
    };
    const answer = await receiveWebhook(broken, signedDelivery(created("evt_d"), [SECRET_A]));
    expect(answer).toMatchObject({
      status: 503,
      body: { outcome: "failed", reason: "not_recorded" },
    });
    expect(await db.prisma.storyEvent.count({ where: { eventId: "evt_d" } })).toBe(0);
    // The sender's retry, once the database answers again, records it.
    expect(await receiveWebhook(db, signedDelivery(created("evt_d"), [SECRET_A]))).toMatchObject({
      status: 200,
      body: { outcome: "accepted" },
    });
  });
});
