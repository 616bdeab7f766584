import { afterEach, describe, expect, it } from "vitest";
import type { StreamEvent } from "./newsroom";
import { type Simulator, startSimulator } from "./server";
import { openSse, type SseRecording } from "./testing/sseClient";

let sim: Simulator;
const open: SseRecording[] = [];

async function connect(headers: Record<string, string> = {}): Promise<SseRecording> {
  const rec = await openSse(`${sim.url}/s/wire/events`, headers);
  open.push(rec);
  return rec;
}
const items = (rec: SseRecording) =>
  rec.events.filter((e) => e.event === "item").map((e) => JSON.parse(e.data) as StreamEvent);
const pageHas = async (link: string) =>
  (await (await fetch(`${sim.url}/s/wire-page/`)).text()).includes(`href="${link}"`);

afterEach(async () => {
  for (const rec of open.splice(0)) rec.close();
  await sim?.stop();
});

describe("primary stream", () => {
  it("is text/event-stream with keepalive comments and item events carrying full metadata", async () => {
    sim = await startSimulator({ seed: 21, manual: true, keepaliveMs: 5_000 });
    const rec = await connect();
    expect(rec.response.headers["content-type"]).toBe("text/event-stream; charset=utf-8");
    sim.control.setRate(30);
    sim.control.advance(60_000);
    await rec.waitFor(() => rec.comments.filter((c) => c.includes("keepalive")).length >= 12);
    await rec.waitFor(() => items(rec).length > 3);
    const [first] = items(rec);
    expect(first).toMatchObject({
      type: "item",
      source: "wire",
      revision: expect.any(Number),
      title: expect.any(String),
      category: expect.any(String),
      breaking: expect.any(Boolean),
      instruments: expect.any(Array),
      language: expect.stringMatching(/^(en|bn)$/),
    });
    expect(first?.guid).toBe(first?.link);
    expect(Number(rec.events[0]?.id)).toBe(first?.seq);
    expect(sim.control.connections()).toEqual({ wire: 1 });
    rec.close();
    await rec.waitFor(() => sim.control.connections().wire === undefined);
  });

  it("carries edits with the next revision and retractions", async () => {
    sim = await startSimulator({ seed: 22, manual: true, ratePerMinute: 0 });
    const rec = await connect();
    const story = sim.control.publish({ title: "Port strike ends", category: "business" });
    await rec.waitFor(() => items(rec).length === 1);
    sim.control.edit("wire", story.guid, {
      title: "Port strike ends after 3 days",
      breaking: true,
    });
    sim.control.retract("wire", story.guid);
    await rec.waitFor(() => rec.events.length === 3);
    expect(JSON.parse(rec.events[0]?.data ?? "{}").breaking).toBe(false);
    expect(JSON.parse(rec.events[1]?.data ?? "{}").breaking).toBe(true);
    expect(rec.events.map((e) => [e.event, JSON.parse(e.data).revision])).toEqual([
      ["item", 1],
      ["item", 2],
      ["retraction", 3],
    ]);
    expect(JSON.parse(rec.events[1]?.data ?? "{}").title).toBe("Port strike ends after 3 days");
  });

  it("shows a story on the page 28 ms before the stream carries it (seed 000's race)", async () => {
    sim = await startSimulator({ seed: 23, manual: true, ratePerMinute: 0 });
    const rec = await connect();
    const story = sim.control.publish({ pageLeadMs: 28, breaking: true });
    expect(await pageHas(story.link)).toBe(true);
    sim.control.advance(27);
    await new Promise((r) => setTimeout(r, 50));
    expect(items(rec)).toHaveLength(0);
    sim.control.advance(1);
    await rec.waitFor(() => items(rec).length === 1);
    expect(items(rec)[0]).toMatchObject({ guid: story.link, breaking: true });
  });

  it("after an edit the page shows the old title a little longer than the stream (seed 000, step 6)", async () => {
    sim = await startSimulator({ seed: 28, manual: true, ratePerMinute: 0 });
    const rec = await connect();
    const story = sim.control.publish({ title: "Old title" });
    sim.control.edit("wire", story.guid, { title: "New title", pageLagMs: 2_000 });
    await rec.waitFor(() => items(rec).length === 2);
    const page = async () => (await fetch(`${sim.url}/s/wire-page/`)).text();
    expect(await page()).toContain(">Old title</a>");
    sim.control.advance(2_000);
    expect(await page()).toContain(">New title</a>");
  });

  it("in real time, the page leads the stream by about 28 ms", async () => {
    sim = await startSimulator({ seed: 24, ratePerMinute: 0 });
    const rec = await connect();
    const published = performance.now();
    const story = sim.control.publish({ pageLeadMs: 28 });
    expect(await pageHas(story.link)).toBe(true);
    await rec.waitFor(() => items(rec).length === 1);
    const lag = (rec.events[0]?.receivedAt ?? 0) - published;
    expect(lag).toBeGreaterThanOrEqual(27);
    expect(lag).toBeLessThan(500);
  });

  it("organic stream stories reach the page first for a share of them", async () => {
    sim = await startSimulator({ seed: 25, manual: true, pageLeadShare: 1, backlogMs: 0 });
    const wire = () => sim.control.stories("wire");
    sim.control.advance(600_000);
    expect(wire().length).toBeGreaterThan(5);
    for (const s of wire()) {
      if (s.streamAt === null) throw new Error("wire stories are streamed");
      expect(s.streamAt - s.pageVisibleAt).toBe(28);
    }
  });

  it("replays what a reconnecting client missed after Last-Event-ID", async () => {
    sim = await startSimulator({ seed: 26, manual: true });
    const lastSeq = (await (await fetch(`${sim.url}/history`)).json()).lastSeq as number;
    sim.control.publish({ title: "missed one" });
    sim.control.publish({ title: "missed two" });
    const rec = await connect({ "last-event-id": String(lastSeq) });
    await rec.waitFor(() => items(rec).length === 2);
    expect(items(rec).map((e) => e.type === "item" && e.title)).toEqual([
      "missed one",
      "missed two",
    ]);
  });
});

describe("history (backfill)", () => {
  it("returns the stream's recent events after a seq or an instant", async () => {
    sim = await startSimulator({ seed: 27, manual: true });
    const all = await (await fetch(`${sim.url}/s/wire/history`)).json();
    expect(all.source).toBe("wire");
    expect(all.truncated).toBe(false);
    expect(all.events.length).toBeGreaterThan(10); // the 20-minute backlog
    expect(all.lastSeq).toBe(all.events.at(-1).seq);

    const middle = all.events[5];
    const afterSeq = await (await fetch(`${sim.url}/history?since=${middle.seq}`)).json();
    expect(afterSeq.events[0].seq).toBe(middle.seq + 1);
    expect(afterSeq.events).toHaveLength(all.events.length - 6);

    const afterInstant = await (
      await fetch(`${sim.url}/history?since=${encodeURIComponent(middle.at)}`)
    ).json();
    expect(afterInstant.events.every((e: StreamEvent) => e.at > middle.at)).toBe(true);
    expect(afterInstant.events.length).toBeGreaterThan(0);

    const bad = await fetch(`${sim.url}/history?since=yesterday`);
    expect(bad.status).toBe(400);
    expect((await bad.json()).error.code).toBe("bad_request");
  });
});
