// The callback's decisions without a hub: a denial recorded, and what a push may not do.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "@/lib/testing/db";
import { receivePush } from "./receivePush";
import { sign } from "./signature";
import { newSecret, newToken } from "./subscriptions";
import { verifyIntent } from "./verifyIntent";

const TOPIC = "https://feeds.example/rss";
let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase({ embedded: true });
  await db.prisma.source.create({ data: { id: "s", name: "S", kind: "feed", url: TOPIC } });
});
afterAll(() => db?.drop());

async function subscription(state: string, pendingMode: string | null) {
  const token = newToken();
  const secret = newSecret();
  await db.prisma.websubSubscription.upsert({
    where: { sourceId: "s" },
    create: {
      sourceId: "s",
      state,
      pendingMode,
      hub: "https://hub.example/",
      topic: TOPIC,
      token,
      secret,
    },
    update: { state, pendingMode, topic: TOPIC, token, secret, rejectedPushes: 0, pushes: 0 },
  });
  return { token, secret };
}

describe("verifyIntent", () => {
  it("records a hub's denial of a pending subscription, with its reason", async () => {
    const { token } = await subscription("pending", "subscribe");
    const params = new URLSearchParams({
      "hub.mode": "denied",
      "hub.topic": TOPIC,
      "hub.reason": "quota",
    });
    expect(await verifyIntent(db, token, params)).toEqual({ status: 200, body: "" });
    const row = await db.prisma.websubSubscription.findUniqueOrThrow({ where: { sourceId: "s" } });
    expect(row).toMatchObject({
      state: "denied",
      pendingMode: null,
      lastError: "hub denied: quota",
    });
    // A second denial finds nothing pending.
    expect((await verifyIntent(db, token, params)).status).toBe(404);
  });

  it("refuses a challenge over 1,000 characters", async () => {
    const { token } = await subscription("pending", "subscribe");
    const params = new URLSearchParams({
      "hub.mode": "subscribe",
      "hub.topic": TOPIC,
      "hub.challenge": "x".repeat(1001),
      "hub.lease_seconds": "60",
    });
    expect((await verifyIntent(db, token, params)).status).toBe(404);
  });
});

describe("receivePush", () => {
  const feed = Buffer.from(
    '<rss version="2.0"><channel><title>t</title><item><title>Pushed</title><guid>g1</guid></item></channel></rss>',
  );
  const push = (body: Buffer, signature: string | null) => ({
    headers: new Headers({
      "content-type": "application/rss+xml",
      ...(signature ? { "x-hub-signature": signature } : {}),
    }),
    body,
  });

  it("refuses an unknown callback (404) and a pending subscription's push (410), writing nothing", async () => {
    expect((await receivePush(db, newToken(), push(feed, "sha256=00"))).status).toBe(404);
    const { token, secret } = await subscription("pending", "subscribe");
    expect((await receivePush(db, token, push(feed, sign(secret, feed)))).status).toBe(410);
    expect(await db.prisma.news.count()).toBe(0);
  });

  it("counts a signed body that is not a feed (400), and never writes it", async () => {
    const { token, secret } = await subscription("active", null);
    const html = Buffer.from("<html><body>not a feed</body></html>");
    const answer = await receivePush(db, token, push(html, sign(secret, html, "sha512")));
    expect(answer).toMatchObject({ status: 400, body: { reason: "parse_error" } });
    const row = await db.prisma.websubSubscription.findUniqueOrThrow({ where: { sourceId: "s" } });
    expect(Number(row.rejectedPushes)).toBe(1);
    expect(await db.prisma.news.count()).toBe(0);
  });

  it("answers 503 when the writer fails, so the hub retries, and counts no push", async () => {
    const { token, secret } = await subscription("active", null);
    const answer = await receivePush(db, token, push(feed, sign(secret, feed)), async () => {
      throw new Error("database away");
    });
    expect(answer.status).toBe(503);
    const row = await db.prisma.websubSubscription.findUniqueOrThrow({ where: { sourceId: "s" } });
    expect(Number(row.pushes)).toBe(0);
  });
});
