import { XMLValidator } from "fast-xml-parser";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type Simulator, startSimulator } from "./server";
import { openSse, type SseRecording } from "./testing/sseClient";

let sim: Simulator;
const open: SseRecording[] = [];
const url = (id: string) => sim.sources().find((s) => s.id === id)?.url ?? "";
const stream = async () => {
  const rec = await openSse(url("wire"));
  open.push(rec);
  return rec;
};
const errorCode = (err: unknown) => ((err as Error).cause as NodeJS.ErrnoException)?.code;
const control = (path: string, method = "GET", body?: unknown) =>
  fetch(`${sim.url}/_control/${path}`, {
    method,
    headers: { "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

beforeAll(async () => {
  sim = await startSimulator({ seed: 31, manual: true, keepaliveMs: 1_000 });
});
afterEach(() => {
  for (const rec of open.splice(0)) rec.close();
  sim.control.clearAll();
});
afterAll(() => sim.stop());

describe("faults", () => {
  it("blackhole: the connection is accepted and never answered", async () => {
    sim.control.inject("meridian-rss", { kind: "blackhole" });
    const started = Date.now();
    const err = await fetch(url("meridian-rss"), { signal: AbortSignal.timeout(300) }).catch(
      (e: unknown) => e,
    );
    expect((err as Error).name).toBe("TimeoutError");
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
    expect((await fetch(url("harbour-rss"))).status).toBe(200); // other sources unaffected
  });

  it("reset: the socket is destroyed, open streams included", async () => {
    const rec = await stream();
    sim.control.inject("wire", { kind: "reset" });
    await rec.waitFor(() => rec.closed);
    const err = await fetch(url("wire")).catch((e: unknown) => e);
    expect(errorCode(err)).toBe("ECONNRESET");
    const feedErr = await fetch(url("wire-page")).then(
      () => null,
      (e: unknown) => e,
    );
    expect(feedErr).toBeNull(); // the page is its own source
  });

  it("503 and 429 end connected streams, and the reconnect meets the fault", async () => {
    for (const fault of [{ kind: "503" }, { kind: "429", retryAfter: 3 }] as const) {
      const rec = await stream();
      expect(rec.response.statusCode).toBe(200);
      sim.control.inject("wire", fault);
      await rec.waitFor(() => rec.closed);
      const again = await fetch(url("wire"));
      expect(again.status).toBe(Number(fault.kind));
      sim.control.clear("wire");
      const back = await stream();
      expect(back.response.statusCode).toBe(200);
      expect(back.closed).toBe(false);
    }
  });

  it("blackhole ends connected streams and leaves the reconnect unanswered", async () => {
    const rec = await stream();
    sim.control.inject("wire", { kind: "blackhole" });
    await rec.waitFor(() => rec.closed);
    const err = await fetch(url("wire"), { signal: AbortSignal.timeout(300) }).catch(
      (e: unknown) => e,
    );
    expect((err as Error).name).toBe("TimeoutError");
  });

  it("faults that do not refuse a connection leave connected streams open", async () => {
    const rec = await stream();
    sim.control.inject("wire", { kind: "latency", ms: 50 });
    sim.control.inject("wire-page", { kind: "503" }); // another source
    await new Promise((r) => setTimeout(r, 100));
    expect(rec.closed).toBe(false);
  });

  it("429 carries Retry-After; 503 is a plain server error; clear restores", async () => {
    sim.control.inject("padma-rdf", { kind: "429", retryAfter: 7 });
    const limited = await fetch(url("padma-rdf"));
    expect(limited.status).toBe(429);
    expect(limited.headers.get("retry-after")).toBe("7");
    sim.control.inject("padma-rdf", { kind: "503" });
    expect(sim.control.faults()).toEqual([
      { sourceId: "padma-rdf", faults: [{ kind: "429", retryAfter: 7 }, { kind: "503" }] },
    ]);
    expect(sim.control.clear("padma-rdf", "429")).toBe(1);
    expect((await fetch(url("padma-rdf"))).status).toBe(503);
    sim.control.clear("padma-rdf");
    expect((await fetch(url("padma-rdf"))).status).toBe(200);
    expect(sim.control.faults()).toEqual([]);
  });

  it("latency delays the answer by the given real milliseconds", async () => {
    sim.control.inject("ledger-rss", { kind: "latency", ms: 250 });
    const started = performance.now();
    const res = await fetch(url("ledger-rss"));
    expect(res.status).toBe(200);
    expect(performance.now() - started).toBeGreaterThanOrEqual(245);
  });

  it("malformed: a 200 whose body is not well-formed XML", async () => {
    sim.control.inject("harbour-atom", { kind: "malformed" });
    const res = await fetch(url("harbour-atom"));
    expect(res.status).toBe(200);
    expect(XMLValidator.validate(await res.text())).not.toBe(true);
  });

  it("no-validators: no ETag or Last-Modified, and conditional requests get a full 200", async () => {
    const etag = (await fetch(url("meridian-rss"))).headers.get("etag") ?? "";
    sim.control.inject("meridian-rss", { kind: "no-validators" });
    const res = await fetch(url("meridian-rss"), { headers: { "if-none-match": etag } });
    expect(res.status).toBe(200);
    expect(res.headers.get("etag")).toBeNull();
    expect(res.headers.get("last-modified")).toBeNull();
  });

  it("lying ETag: 304 to a conditional request although the content changed", async () => {
    sim.control.inject("ledger-rss", { kind: "lying-etag" });
    const before = await fetch(url("ledger-rss"));
    const etag = before.headers.get("etag") ?? "";
    const oldBody = await before.text();
    sim.control.advance(2_000);
    sim.control.publish({ outlet: "ledger", language: "bn", title: "লুকানো খবর" });
    const conditional = await fetch(url("ledger-rss"), { headers: { "if-none-match": etag } });
    expect(conditional.status).toBe(304);
    const plain = await fetch(url("ledger-rss"));
    expect(plain.headers.get("etag")).toBe(etag);
    const newBody = await plain.text();
    expect(newBody).not.toBe(oldBody);
    expect(newBody).toContain("লুকানো খবর");
    sim.control.clear("ledger-rss");
    const honest = await fetch(url("ledger-rss"), { headers: { "if-none-match": etag } });
    expect(honest.status).toBe(200);
  });

  it("stalled stream: connected, and not one byte arrives, not even keepalives", async () => {
    sim.control.inject("wire", { kind: "stall" });
    const rec = await stream();
    expect(rec.response.statusCode).toBe(200);
    sim.control.publish({ title: "never seen" });
    sim.control.advance(30_000);
    await new Promise((r) => setTimeout(r, 100));
    expect(rec.bytes).toBe(0);
    expect(rec.closed).toBe(false);
    sim.control.clear("wire");
    sim.control.advance(1_000);
    await rec.waitFor(() => rec.comments.length > 0);
  });

  it("quiet period: keepalives only, no items", async () => {
    sim.control.setRate(60);
    sim.control.advance(120_000); // let already-scheduled wire stories go out first
    sim.control.inject("wire", { kind: "quiet" });
    const rec = await stream();
    sim.control.advance(120_000);
    await rec.waitFor(() => rec.comments.filter((c) => c.includes("keepalive")).length >= 100);
    expect(rec.events).toEqual([]);
    sim.control.clear("wire");
    sim.control.advance(120_000);
    await rec.waitFor(() => rec.events.length > 0);
    sim.control.setRate(8);
  });

  it("rejects faults that make no sense for the source", () => {
    expect(() => sim.control.inject("meridian-rss", { kind: "stall" })).toThrow(/streams/);
    expect(() => sim.control.inject("wire", { kind: "lying-etag" })).toThrow(/feeds/);
    expect(() => sim.control.inject("nope", { kind: "503" })).toThrow(/unknown source/);
    expect(() => sim.control.inject("wire", { kind: "latency" } as never)).toThrow(/ms/);
  });
});

describe("stop", () => {
  it("does not wait for blackholed or delayed requests", async () => {
    const other = await startSimulator({ seed: 32, manual: true });
    other.control.inject("meridian-rss", { kind: "blackhole" });
    other.control.inject("ledger-rss", { kind: "latency", ms: 60_000 });
    const pending = ["meridian-rss", "ledger-rss"].map((id) =>
      fetch(other.sources().find((s) => s.id === id)?.url ?? "").catch((e: unknown) => e),
    );
    await new Promise((r) => setTimeout(r, 50));
    const started = Date.now();
    await other.stop();
    expect(Date.now() - started).toBeLessThan(1_000);
    for (const result of await Promise.all(pending)) expect(result).toBeInstanceOf(Error);
  });
});

describe("control API over HTTP", () => {
  it("injects, lists and clears faults; publishes; sets the rate; answers errors as JSON", async () => {
    const injected = await control("faults/wire-page", "POST", { kind: "latency", ms: 10 });
    expect(await injected.json()).toEqual({
      sourceId: "wire-page",
      fault: { kind: "latency", ms: 10 },
    });
    expect(await (await control("faults")).json()).toEqual({
      faults: [{ sourceId: "wire-page", faults: [{ kind: "latency", ms: 10 }] }],
    });
    expect(await (await control("faults/wire-page", "DELETE")).json()).toEqual({
      sourceId: "wire-page",
      cleared: 1,
    });

    const published = await (
      await control("publish", "POST", { outlet: "padma", language: "bn", title: "পরীক্ষা" })
    ).json();
    expect(published.story).toMatchObject({ outlet: "padma", title: "পরীক্ষা", revision: 1 });
    const edited = await (
      await control("edit", "POST", { outlet: "padma", guid: published.story.guid, title: "x" })
    ).json();
    expect(edited.story.revision).toBe(2);

    expect(await (await control("rate", "POST", { perMinute: 12 })).json()).toEqual({
      perMinute: 12,
    });
    const advanced = await (await control("advance", "POST", { ms: 1_000 })).json();
    expect(Date.parse(advanced.now)).toBe(sim.control.now());

    const bad = await control("faults/wire", "POST", { kind: "explode" });
    expect(bad.status).toBe(400);
    expect((await bad.json()).error.message).toMatch(/kinds: latency, 429, 503, blackhole/);
    const unknown = await control("faults/nope", "POST", { kind: "503" });
    expect(unknown.status).toBe(404);
    expect((await unknown.json()).error.code).toBe("not_found");
    expect((await control("publish", "POST", "{")).status).toBe(400);
  });
});
