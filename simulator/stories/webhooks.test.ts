import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Webhook } from "standardwebhooks";
import { afterEach, describe, expect, it } from "vitest";
import { storyEventSchema } from "@/workers/stories/events";
import { Random } from "../random";
import { StoryDesk } from "./desk";
import { makeSecret, WebhookSender } from "./webhooks";

interface Received {
  headers: IncomingHttpHeaders;
  body: string;
}

/** A local receiver; `answer` picks the status for the nth request (0-based). */
async function receiver(answer: (n: number) => number = () => 204) {
  const received: Received[] = [];
  let n = 0;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      received.push({ headers: req.headers, body: Buffer.concat(chunks).toString("utf8") });
      res.writeHead(answer(n++));
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  servers.push(server);
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  return { url, received };
}

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(
    servers.splice(0).map((s) => new Promise((resolve) => s.close(() => resolve(undefined)))),
  );
});

function setup(seed = 1) {
  const desk = new StoryDesk({ random: new Random(seed), clock: () => Date.now() });
  const sender = new WebhookSender({ random: new Random(seed + 1), backoffMs: 5 });
  desk.onEvent((e) => sender.deliver(e));
  return { desk, sender };
}

const headersOf = (r: Received) => ({
  "webhook-id": String(r.headers["webhook-id"]),
  "webhook-timestamp": String(r.headers["webhook-timestamp"]),
  "webhook-signature": String(r.headers["webhook-signature"]),
});

describe("WebhookSender", () => {
  it("signs per Standard Webhooks: the body is the event, the id its id", async () => {
    const { desk, sender } = setup();
    const hook = await receiver();
    const secret = makeSecret(new Random(42));
    sender.add({ url: hook.url, secrets: [secret] });
    const [event] = desk.create("ACME");
    await sender.flush();
    expect(hook.received).toHaveLength(1);
    const got = hook.received[0] as Received;
    expect(got.headers["content-type"]).toBe("application/json");
    expect(got.headers["webhook-id"]).toBe(event?.id);
    const verified = new Webhook(secret).verify(got.body, headersOf(got));
    expect(verified).toEqual(event);
    expect(storyEventSchema.parse(verified)).toBeTruthy();
    expect(() =>
      new Webhook(makeSecret(new Random(43))).verify(got.body, headersOf(got)),
    ).toThrow();
    expect(sender.stats()).toEqual({
      wh_1: { sent: 1, succeeded: 1, failed: 0, retried: 0, dropped: 0, duplicated: 0 },
    });
  });

  it("signs with every secret while one is rotated: each verifies on its own", async () => {
    const { desk, sender } = setup();
    const hook = await receiver();
    const [oldSecret, newSecret] = [makeSecret(new Random(1)), makeSecret(new Random(2))];
    sender.add({ url: hook.url, secrets: [oldSecret, newSecret] });
    desk.create("ACME");
    await sender.flush();
    const got = hook.received[0] as Received;
    expect(String(got.headers["webhook-signature"]).split(" ")).toHaveLength(2);
    for (const secret of [oldSecret, newSecret]) {
      expect(new Webhook(secret).verify(got.body, headersOf(got))).toBeTruthy();
    }
  });

  it("retries a 503 with backoff, same webhook-id; gives up at once on a 400", async () => {
    const { desk, sender } = setup();
    const flaky = await receiver((n) => (n < 3 ? 503 : 200));
    const secret = makeSecret(new Random(1));
    sender.add({ url: flaky.url, secrets: [secret] });
    const [event] = desk.create("ACME");
    await sender.flush();
    expect(flaky.received.map((r) => r.headers["webhook-id"])).toEqual(Array(4).fill(event?.id));
    const last = flaky.received[3] as Received;
    expect(new Webhook(secret).verify(last.body, headersOf(last))).toEqual(event);
    expect(sender.stats().wh_1).toMatchObject({ sent: 4, succeeded: 1, retried: 3, failed: 0 });

    const refusing = await receiver(() => 400);
    const { id } = sender.add({ url: refusing.url, secrets: [secret], tickers: ["GLOBX"] });
    desk.create("GLOBX");
    desk.create("ACME"); // not for that endpoint
    await sender.flush();
    expect(refusing.received).toHaveLength(1);
    expect(sender.stats()[id]).toMatchObject({ sent: 1, failed: 1, retried: 0 });
  });

  it("gives up after maxAttempts against a dead endpoint", async () => {
    const desk = new StoryDesk({ random: new Random(1), clock: Date.now });
    const sender = new WebhookSender({ random: new Random(1), backoffMs: 1, maxAttempts: 3 });
    desk.onEvent((e) => sender.deliver(e));
    sender.add({ url: "http://127.0.0.1:9/nothing", secrets: [makeSecret(new Random(1))] });
    desk.create("ACME");
    await sender.flush();
    expect(sender.stats().wh_1).toMatchObject({ sent: 3, retried: 2, failed: 1, succeeded: 0 });
  });

  it("drop and duplicate faults do what they say, counted in stats", async () => {
    const { desk, sender } = setup(7);
    const hook = await receiver();
    const { id } = sender.add({ url: hook.url, secrets: [makeSecret(new Random(1))] });
    sender.setFaults({ drop: { share: 0.3 }, duplicate: { share: 0.3 } }, id);
    const published = new Set<string>();
    for (let i = 0; i < 60; i++) for (const e of desk.step()) published.add(e.id);
    await sender.flush();
    const stats = sender.stats()[id];
    const ids = hook.received.map((r) => String(r.headers["webhook-id"]));
    expect(stats?.dropped).toBeGreaterThan(0);
    expect(stats?.duplicated).toBeGreaterThan(0);
    expect(new Set(ids).size).toBe(published.size - (stats?.dropped ?? 0));
    expect(ids.length).toBe(published.size - (stats?.dropped ?? 0) + (stats?.duplicated ?? 0));
    sender.clearFaults();
    desk.create("ACME");
    await sender.flush();
    expect(hook.received).toHaveLength(ids.length + 1);
  });

  it("late deliveries arrive out of order, several in flight at once", async () => {
    const { desk, sender } = setup(3);
    const hook = await receiver();
    sender.add({ url: hook.url, secrets: [makeSecret(new Random(1))] });
    sender.setFaults({ late: { minMs: 0, maxMs: 120 } });
    const order: string[] = [];
    for (let i = 0; i < 20; i++) for (const e of desk.create("ACME")) order.push(e.id);
    expect(sender.inFlight()).toBe(20);
    await sender.flush();
    const arrived = hook.received.map((r) => String(r.headers["webhook-id"]));
    expect([...arrived].sort()).toEqual(order);
    expect(arrived).not.toEqual(order);
  });

  it("stop() aborts what is waiting", async () => {
    const { desk, sender } = setup();
    const hook = await receiver();
    sender.add({ url: hook.url, secrets: [makeSecret(new Random(1))] });
    sender.setFaults({ late: { minMs: 10_000, maxMs: 10_000 } });
    desk.create("ACME");
    await sender.stop();
    expect(hook.received).toHaveLength(0);
    expect(sender.stats().wh_1).toMatchObject({ failed: 1, sent: 0 });
  });
});
