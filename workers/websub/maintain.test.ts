// The upkeep round's decisions with the hub and discovery injected: what is asked, and when.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "@/lib/testing/db";
import type { HubRequest } from "./hubRequest";
import { maintainSubscriptions } from "./maintain";

let db: TestDatabase;
const asked: (HubRequest & { hub: string })[] = [];
let hubStatus = 202;
let found = 0;

beforeAll(async () => {
  db = await createTestDatabase({ embedded: true });
  await db.prisma.source.create({
    data: { id: "f", name: "F", kind: "feed", url: "https://f.example/rss" },
  });
});
afterAll(() => db?.drop());

const round = (now: Date) =>
  maintainSubscriptions(db, {
    callbackBase: "https://news.example.com/",
    leaseSeconds: 600,
    now,
    discover: async () => {
      found++;
      return { hub: "https://hub.example/", self: "https://f.example/rss?self" };
    },
    askHub: async (hub, request) => {
      asked.push({ hub, ...request });
      return { status: hubStatus, detail: hubStatus === 202 ? "" : "over quota" };
    },
  });
const row = () => db.prisma.websubSubscription.findUniqueOrThrow({ where: { sourceId: "f" } });

describe("maintainSubscriptions", () => {
  it("marks a subscription failed when the hub refuses the request, and retries after an hour", async () => {
    hubStatus = 429;
    const t0 = new Date("2026-12-02T09:00:00Z");
    expect(await round(t0)).toMatchObject({ checked: 1, subscribed: 0, failed: 1 });
    expect(await row()).toMatchObject({
      state: "failed",
      pendingMode: null,
      lastError: "hub answered 429: over quota",
      topic: "https://f.example/rss?self",
    });
    expect(asked[0]).toMatchObject({
      hub: "https://hub.example/",
      mode: "subscribe",
      topic: "https://f.example/rss?self",
      leaseSeconds: 600,
    });
    expect(asked[0]?.callback).toMatch(/^https:\/\/news\.example\.com\/api\/websub\/[\w-]{43}$/);
    // Within the hour nothing is asked; after it, again.
    expect(await round(new Date(t0.getTime() + 30 * 60_000))).toMatchObject({ checked: 0 });
    hubStatus = 202;
    expect(await round(new Date(t0.getTime() + 61 * 60_000))).toMatchObject({ subscribed: 1 });
    expect(await row()).toMatchObject({ state: "pending", pendingMode: "subscribe" });
    expect(found).toBe(2);
  });

  it("gives a request the hub never verified 10 minutes, then marks it failed", async () => {
    const requested = (await row()).requestedAt as Date;
    expect(await round(new Date(requested.getTime() + 9 * 60_000))).toMatchObject({ failed: 0 });
    expect(await round(new Date(requested.getTime() + 11 * 60_000))).toMatchObject({ failed: 1 });
    expect(await row()).toMatchObject({
      state: "failed",
      lastError: "the hub did not verify intent within 10 minutes",
    });
  });

  it("unsubscribes the live subscription of a source that was removed", async () => {
    await db.prisma.websubSubscription.update({
      where: { sourceId: "f" },
      data: { state: "active", pendingMode: null, expiresAt: new Date(Date.now() + 600_000) },
    });
    await db.prisma.source.delete({ where: { id: "f" } });
    const before = asked.length;
    expect(await round(new Date())).toMatchObject({ unsubscribed: 1 });
    expect(asked.slice(before)).toEqual([
      expect.objectContaining({ mode: "unsubscribe", topic: "https://f.example/rss?self" }),
    ]);
    expect(await row()).toMatchObject({ state: "unsubscribing", pendingMode: "unsubscribe" });
  });
});
