import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventsPageSchema, storyEventSchema, storySchema } from "@/workers/stories/events";
import { type Simulator, startSimulator } from "../server";

let sim: Simulator;
const api = (path: string) => fetch(`${sim.url}/stories-api${path}`);
const json = async (res: Response | Promise<Response>) => {
  const r = await res;
  return {
    status: r.status,
    body: (await r.json()) as Record<string, unknown> & { data?: unknown[] },
  };
};
const control = (path: string, method: string, body?: unknown) =>
  json(
    fetch(`${sim.url}/_control/stories/${path}`, {
      method,
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    }),
  );
const createdId = (events: unknown[]) =>
  (
    events.find((e) => (e as { type: string }).type === "story.created") as {
      data: { story: { id: string } };
    }
  ).data.story.id;

beforeAll(async () => {
  sim = await startSimulator({ seed: 3, manual: true, stories: { webhooks: { backoffMs: 5 } } });
});
afterAll(() => sim.stop());

describe("story API over HTTP", () => {
  it("is listed as a story-api source with a deterministic webhook secret", async () => {
    const source = sim.sources().find((s) => s.kind === "story-api");
    expect(source).toMatchObject({
      id: "story-desk",
      url: `${sim.url}/stories-api`,
      collectors: ["A"],
      pollIntervalSeconds: 180,
      tickers: ["ACME", "GLOBX", "INITECH", "UMBRA"],
      storyMode: "snapshot",
    });
    expect(source?.webhookSecrets?.[0]).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    const again = await startSimulator({ seed: 3, manual: true });
    expect(again.sources().at(-1)?.webhookSecrets).toEqual(source?.webhookSecrets);
    await again.stop();
    expect((await api("")).status).toBe(200);
  });

  it("serves lists, single stories (404 once closed) and event pages", async () => {
    const desk = sim.control.stories.desk;
    const id = createdId(desk.create("ACME", "Acme beats"));
    desk.shortlist(id);
    const list = await json(api("/v1/stories?ticker=ACME"));
    expect(list.status).toBe(200);
    expect(list.body.data?.map((s) => storySchema.parse(s).id)).toContain(id);
    expect((await json(api("/v1/stories"))).status).toBe(400);

    const one = await json(api(`/v1/stories/${id}`));
    expect(storySchema.parse(one.body)).toMatchObject({ id, version: 2 });
    desk.close(id);
    expect(await json(api(`/v1/stories/${id}`))).toMatchObject({
      status: 404,
      body: { error: { code: "not_found" } },
    });
    expect(
      (await json(api("/v1/stories?ticker=ACME"))).body.data?.map((s) => (s as { id: string }).id),
    ).not.toContain(id);

    const page = eventsPageSchema.parse(
      (await json(api("/v1/events?tickers=ACME,GLOBX&limit=2"))).body,
    );
    expect(page.data).toHaveLength(2);
    expect(page.has_more).toBe(true);
    for (const e of page.data) storyEventSchema.parse(e);
    const rest = eventsPageSchema.parse(
      (await json(api(`/v1/events?cursor=${page.next_cursor}&tickers=ACME`))).body,
    );
    expect(rest.data.map((e) => (e as { type: string }).type)).toEqual([
      "story.updated",
      "story.closed",
    ]);
    expect(rest.has_more).toBe(false);

    expect((await json(api("/v1/events?cursor=nonsense"))).status).toBe(400);
    expect((await control("expire-cursors", "POST")).body).toEqual({ epoch: 1 });
    expect(await json(api(`/v1/events?cursor=${rest.next_cursor}`))).toMatchObject({
      status: 410,
      body: { error: { code: "cursor_expired" } },
    });
    expect((await json(api("/v1/events"))).status).toBe(200);
  });

  it("applies the source's network faults and stale reads", async () => {
    const desk = sim.control.stories.desk;
    const id = createdId(desk.create("GLOBX"));
    sim.control.inject("story-desk", { kind: "503" });
    expect((await api(`/v1/stories/${id}`)).status).toBe(503);
    sim.control.clear("story-desk");

    sim.control.inject("story-desk", { kind: "stale-reads", ms: 400 });
    const slow = json(api(`/v1/stories/${id}`));
    await new Promise((r) => setTimeout(r, 150)); // the read has taken its answer by now
    desk.update(id, "changed meanwhile");
    const answered = await slow;
    expect(answered.body).toMatchObject({ id, version: 1 });
    sim.control.clear("story-desk", "stale-reads");
    expect((await json(api(`/v1/stories/${id}`))).body).toMatchObject({ version: 2 });

    expect(() => sim.control.inject("wire", { kind: "stale-reads", ms: 10 })).toThrow(/story APIs/);
    expect(() => sim.control.inject("story-desk", { kind: "stall" })).toThrow(/streams/);
  });

  it("delivers webhooks signed with the listed secret; controlled over /_control/stories", async () => {
    const received: { headers: IncomingHttpHeaders; body: string }[] = [];
    const server: Server = createServer((req, res) => {
      let body = "";
      req.on("data", (c) => (body += c));
      req.on("end", () => {
        received.push({ headers: req.headers, body });
        res.writeHead(received.length <= 1 ? 503 : 200).end();
      });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    try {
      const added = await control("webhooks", "POST", { url, tickers: ["UMBRA"] });
      const secret = sim.sources().at(-1)?.webhookSecrets?.[0] as string;
      expect(added.body).toEqual({ id: expect.any(String), secrets: [secret] });
      sim.control.stories.desk.create("UMBRA");
      sim.control.stories.desk.create("ACME"); // not for this endpoint
      const flushed = await control("flush", "POST");
      expect(flushed.body.stats).toMatchObject({
        [added.body.id as string]: { succeeded: 1, retried: 1 },
      });
      expect(received).toHaveLength(2);
      const last = received[1] as (typeof received)[number];
      const event = new Webhook(secret).verify(last.body, {
        "webhook-id": String(last.headers["webhook-id"]),
        "webhook-timestamp": String(last.headers["webhook-timestamp"]),
        "webhook-signature": String(last.headers["webhook-signature"]),
      });
      expect(storyEventSchema.parse(event)).toMatchObject({
        type: "story.created",
        ticker: "UMBRA",
      });

      expect((await control("webhook-faults", "POST", { drop: { share: 1 } })).status).toBe(200);
      const stepped = await control("step", "POST", { n: 5 });
      expect(stepped.body.events).not.toHaveLength(0);
      await sim.control.stories.flush();
      expect((await control("webhook-faults", "DELETE")).body).toEqual({
        faults: { global: {}, endpoints: {} },
      });
      const listed = await control("webhooks", "GET");
      expect(listed.body.webhooks).toHaveLength(1);
      expect((await control(`webhooks/${added.body.id}`, "DELETE")).body).toMatchObject({
        removed: true,
      });
      expect((await control("snapshot", "GET")).body).toMatchObject({ epoch: expect.any(Number) });
      expect((await control("step", "POST", { n: -1 })).status).toBe(400);
    } finally {
      await new Promise((r) => server.close(r));
    }
  });

  it("in real time, makes up a backlog so lists are not empty", async () => {
    const live = await startSimulator({ seed: 4 });
    try {
      const lists = await Promise.all(
        ["ACME", "GLOBX", "INITECH", "UMBRA"].map(
          async (t) =>
            (await (await fetch(`${live.url}/stories-api/v1/stories?ticker=${t}`)).json()) as {
              data: unknown[];
            },
        ),
      );
      expect(lists.reduce((n, l) => n + l.data.length, 0)).toBeGreaterThan(5);
    } finally {
      await live.stop();
    }
  });
});
