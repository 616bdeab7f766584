import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Database, openDatabase } from "@/lib/db";
import { privatePostgresOrSkip } from "@/lib/testing/privatePostgres";
import { Random } from "@/simulator/random";
import { StoryDesk } from "@/simulator/stories/desk";
import { WebhookSender } from "@/simulator/stories/webhooks";
import { receiveWebhook } from "./receiveWebhook";
import { loadStorySource } from "./source";
import { SECRET_A } from "./testing/signing";

// Stops PostgreSQL, so it runs on a cluster of its own (never the shared test server).
const cluster = await privatePostgresOrSkip(
  "the story webhook outage test (workers/stories/outage.test.ts)",
);
afterAll(() => cluster?.destroy());

describe.skipIf(!cluster)("story webhooks while the database is down", () => {
  // biome-ignore lint/style/noNonNullAssertion: skipped when there is no cluster
  const pg = cluster!;
  let db: Database;
  let server: Server;
  let url: string;
  const statuses: number[] = [];

  beforeAll(async () => {
    db = await openDatabase({ url: pg.url(), poolSize: 4 });
    await db.prisma.source.create({
      data: {
        id: "desk",
        name: "Desk",
        kind: "story-api",
        url: "http://desk.invalid/",
        tickers: ["ACME", "GLOBX"],
        webhookSecrets: [SECRET_A],
      },
    });
    await loadStorySource(db, "desk"); // the subscription starts now
    // The route's work, minus Next: raw body in, receiveWebhook's answer out.
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", async () => {
        const headers = new Headers();
        for (const [k, v] of Object.entries(req.headers))
          if (typeof v === "string") headers.set(k, v);
        const answer = await receiveWebhook(db, {
          sourceId: "desk",
          headers,
          body: Buffer.concat(chunks),
        });
        statuses.push(answer.status);
        res.writeHead(answer.status, { "content-type": "application/json" });
        res.end(JSON.stringify(answer.body));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  });
  afterAll(async () => {
    if (!pg.running()) await pg.start();
    await db?.close().catch(() => undefined);
    await new Promise<void>((resolve) => server?.close(() => resolve()));
  });

  it("answers 503 while PostgreSQL is stopped; the sender's retries land every event once it is back", async () => {
    const desk = new StoryDesk({
      random: new Random(3),
      clock: Date.now,
      tickers: ["ACME", "GLOBX"],
    });
    const sender = new WebhookSender({
      random: new Random(4),
      backoffMs: 200,
      maxBackoffMs: 1_000,
      maxAttempts: 30,
    });
    sender.add({ url, secrets: [SECRET_A] });
    desk.onEvent((e) => sender.deliver(e));
    const published: string[] = [];
    desk.onEvent((e) => void published.push(e.id));

    for (let i = 0; i < 10; i++) desk.step();
    await sender.flush();
    await pg.stop("immediate");
    for (let i = 0; i < 30; i++) desk.step(); // published while the database is away
    await new Promise((r) => setTimeout(r, 3_000));
    expect(statuses.filter((s) => s === 503).length).toBeGreaterThan(0);
    await pg.start();
    await sender.flush();

    const recorded = await db.prisma.storyEvent.findMany({ where: { sourceId: "desk" } });
    expect(recorded.map((r) => r.eventId).sort()).toEqual([...published].sort());
    // Each recorded once, with its job to apply it.
    const jobs = await db.prisma.job.count({
      where: { queue: "story", key: { startsWith: "event:desk/" } },
    });
    expect(jobs).toBe(published.length);
    const stats = Object.values(sender.stats())[0];
    expect(stats?.failed).toBe(0);
    expect(stats?.retried).toBeGreaterThan(0);
  }, 60_000);
});
