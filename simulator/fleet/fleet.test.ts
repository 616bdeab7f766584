import { readFile } from "node:fs/promises";
import { request } from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { parseSourcesFile } from "@/workers/sources/sourcesFile";
import { type Simulator, type SimulatorOptions, startSimulator } from "../server";

const CLOCK = () => Date.parse("2026-06-12T09:00:00Z");
const running: Simulator[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.stop()));
});

async function start(fleet: SimulatorOptions["fleet"], seed = 1): Promise<Simulator> {
  const sim = await startSimulator({ seed, clock: CLOCK, manual: true, fleet });
  running.push(sim);
  return sim;
}

function first(sim: Simulator, match: (i: number) => boolean): number {
  const fleet = sim.fleet as NonNullable<Simulator["fleet"]>;
  for (let i = 0; i < fleet.size; i++) if (match(i)) return i;
  throw new Error("no such feed");
}

/** A GET that reports a dropped connection instead of throwing, with its time. */
function get(url: string, headers: Record<string, string> = {}) {
  const started = Date.now();
  return new Promise<{ status: number | "dropped"; ms: number; body: string }>((resolve) => {
    const req = request(url, { headers, agent: false }, (res) => {
      let body = "";
      res.setEncoding("utf8").on("data", (c: string) => {
        body += c;
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, ms: Date.now() - started, body }));
    });
    req.on("error", () => resolve({ status: "dropped", ms: Date.now() - started, body: "" }));
    req.end();
  });
}

describe("fleet over HTTP", () => {
  it("lists its feeds in index order as wirewatch sources, one host per address", async () => {
    const sim = await start({ sources: 1_000, feedsPerHost: 100, pollIntervalSeconds: 120 });
    const fleet = sim.fleet as NonNullable<Simulator["fleet"]>;
    expect(fleet.hosts).toBe(10);
    const sources = fleet.sources();
    expect(sources).toHaveLength(1_000);
    expect(sources[0]).toEqual({
      id: "fleet-000000",
      name: expect.any(String),
      kind: "feed",
      url: `http://127.1.0.1:${fleet.port}/f/0/feed.xml`,
      allowPrivate: true,
      collectors: ["A"],
      pollIntervalSeconds: 120,
    });
    expect(sources[11]?.url).toBe(`http://127.1.0.2:${fleet.port}/f/11/feed.xml`);
    expect(sources.map((s) => s.id)).toEqual([...sources.map((s) => s.id)].sort());
    const hosts = new Map<string, number>();
    for (const s of sources)
      hosts.set(new URL(s.url).host, (hosts.get(new URL(s.url).host) ?? 0) + 1);
    expect([...hosts.values()]).toEqual(Array(10).fill(100));
    // The newsroom's own sources are unchanged.
    expect(sim.sources().some((s) => s.id.startsWith("fleet-"))).toBe(false);

    const file = path.join(tmpdir(), `fleet-sources-${process.pid}.json`);
    expect(await fleet.writeSources(file)).toBe(1_000);
    const parsed = parseSourcesFile(await readFile(file, "utf8"), file);
    expect(parsed.map((s) => s.url)).toEqual(sources.map((s) => s.url));
    await expect(fleet.writeSources("/nonexistent-dir/x.json")).rejects.toThrow(/ENOENT/);
  });

  it("answers 304 to a conditional GET until a new item appears", async () => {
    const sim = await start({ sources: 1_000 });
    const fleet = sim.fleet as NonNullable<Simulator["fleet"]>;
    const i = first(
      sim,
      (n) => fleet.profile(n).behaviour === "quiet" && fleet.profile(n).validators,
    );
    const url = fleet.source(i).url;
    const full = await fetch(url);
    const etag = full.headers.get("etag") as string;
    const lastModified = full.headers.get("last-modified") as string;
    expect(full.status).toBe(200);
    expect(etag).toMatch(/^"[^"]+"$/);
    expect((await fetch(url, { headers: { "if-none-match": etag } })).status).toBe(304);
    expect((await fetch(url, { headers: { "if-modified-since": lastModified } })).status).toBe(304);
    expect((await fetch(url, { headers: { "if-none-match": '"other"' } })).status).toBe(200);

    // Quiet: the next item within 6 hours; a poll after it gets the new document.
    const next = fleet.items(i, CLOCK() + 7 * 3_600_000).at(0)?.publishedAt as number;
    sim.control.advance(next - CLOCK() + 1);
    const after = await fetch(url, { headers: { "if-none-match": etag } });
    expect(after.status).toBe(200);
    expect(after.headers.get("etag")).not.toBe(etag);
    expect(await after.text()).toContain(
      fleet.items(i)[0]?.title.replaceAll("&", "&amp;").slice(0, 20),
    );
    expect(fleet.stats().answers).toMatchObject({ "200": 3, "304": 2 });
  });

  it("a feed without validators serves the same body until it changes", async () => {
    const sim = await start({ sources: 1_000 });
    const fleet = sim.fleet as NonNullable<Simulator["fleet"]>;
    const i = first(
      sim,
      (n) => fleet.profile(n).behaviour === "quiet" && !fleet.profile(n).validators,
    );
    const a = await fetch(fleet.source(i).url);
    expect(a.headers.get("etag")).toBeNull();
    expect(a.headers.get("last-modified")).toBeNull();
    sim.control.advance(60_000);
    expect(await (await fetch(fleet.source(i).url)).text()).toBe(await a.text());
  });

  it("serves each feed on its own host only, and robots.txt on every host", async () => {
    const sim = await start({ sources: 1_000 });
    const fleet = sim.fleet as NonNullable<Simulator["fleet"]>;
    const { port } = fleet;
    expect((await fetch(`http://127.1.0.2:${port}/f/1/feed.xml`)).status).toBe(200);
    expect((await fetch(`http://127.1.0.3:${port}/f/1/feed.xml`)).status).toBe(404);
    expect((await fetch(`http://127.1.0.2:${port}/f/5000/feed.xml`)).status).toBe(404);
    expect((await fetch(`http://127.1.0.2:${port}/other`)).status).toBe(404);
    expect(await (await fetch(`http://127.1.0.10:${port}/robots.txt`)).text()).toMatch(/Allow: \//);
    // One listener per address: none on 127.0.0.1 or past the last host.
    expect((await get(`http://127.0.0.1:${port}/f/0/feed.xml`)).status).toBe("dropped");
    expect((await get(`http://127.1.0.11:${port}/f/0/feed.xml`)).status).toBe("dropped");
    // An item's link resolves on its host.
    const item = fleet.items(1)[0];
    expect((await fetch(item?.link as string)).status).toBe(200);
  });

  it("with bind any, one listener answers every fleet address and refuses others", async () => {
    const sim = await start({ sources: 300, bind: "any" });
    const fleet = sim.fleet as NonNullable<Simulator["fleet"]>;
    expect(fleet.bind).toBe("any");
    expect((await fetch(`http://127.1.0.3:${fleet.port}/f/2/feed.xml`)).status).toBe(200);
    const other = await fetch(`http://127.0.0.1:${fleet.port}/f/0/feed.xml`);
    expect(other.status).toBe(404);
    expect(await other.text()).toMatch(/not a fleet host/);
  });

  it("failing feeds fail their way; a recovering one comes back", async () => {
    const sim = await start({ sources: 3_000, timeoutHoldMs: 300 });
    const fleet = sim.fleet as NonNullable<Simulator["fleet"]>;
    const failing = (kind: string) => first(sim, (n) => fleet.profile(n).failure === kind);
    const down = await fetch(fleet.source(failing("down")).url);
    expect(down.status).toBe(503);
    expect(down.headers.get("retry-after")).toBe("600");
    const recovering = fleet.source(failing("recovering")).url;
    expect((await fetch(recovering)).status).toBe(503);
    sim.control.advance(31 * 60_000);
    expect((await fetch(recovering)).status).toBe(200);
    const timeout = await get(fleet.source(failing("timeout")).url);
    expect(timeout.status).toBe("dropped");
    expect(timeout.ms).toBeGreaterThanOrEqual(250);
    // Flapping: 500 in about half of its 10-minute windows, 200 in the others.
    const flapping = fleet.source(failing("flapping")).url;
    const seen = new Set<number>();
    for (let w = 0; w < 12; w++) {
      seen.add((await fetch(flapping)).status);
      sim.control.advance(10 * 60_000);
    }
    expect([...seen].sort()).toEqual([200, 500]);
    expect(fleet.stats().answers).toMatchObject({ held: 1, dropped: 1 });
  });

  it("a slow feed answers after its delay", async () => {
    const sim = await start({ sources: 1_000, slowMs: [300, 400] });
    const fleet = sim.fleet as NonNullable<Simulator["fleet"]>;
    const slow = await get(
      fleet.source(first(sim, (n) => fleet.profile(n).behaviour === "slow")).url,
    );
    expect(slow.status).toBe(200);
    expect(slow.ms).toBeGreaterThanOrEqual(290);
    const quick = await get(
      fleet.source(first(sim, (n) => fleet.profile(n).behaviour === "quiet")).url,
    );
    expect(quick.ms).toBeLessThan(290);
  });

  it("the same seed and clock serve the same documents", async () => {
    const [a, b] = await Promise.all([start({ sources: 500 }, 4), start({ sources: 500 }, 4)]);
    for (const i of [0, 7, 499]) {
      const fa = a.fleet as NonNullable<Simulator["fleet"]>;
      const fb = b.fleet as NonNullable<Simulator["fleet"]>;
      const [ba, bb] = await Promise.all([
        fetch(fa.source(i).url).then((r) => r.text()),
        fetch(fb.source(i).url).then((r) => r.text()),
      ]);
      expect(ba.replaceAll(`:${fa.port}`, ":P")).toBe(bb.replaceAll(`:${fb.port}`, ":P"));
    }
  });

  it("logs fleet requests and rates each host's busiest second", async () => {
    const sim = await start({ sources: 1_000 });
    const fleet = sim.fleet as NonNullable<Simulator["fleet"]>;
    const host = `127.1.0.4:${fleet.port}`;
    for (let n = 0; n < 5; n++) await fetch(`http://${host}/robots.txt`);
    await fetch(`http://127.1.0.5:${fleet.port}/robots.txt`);
    expect(sim.control.requests({ pathPrefix: "/robots.txt" })).toHaveLength(6);
    const rates = sim.control.hostRates();
    expect(rates[0]).toMatchObject({ host, requests: 5, maxPerSecond: 5, saturated: false });
    const served = await (await fetch(`${sim.url}/_control/hosts?top=1`)).json();
    expect(served).toEqual({ hosts: 2, rates: [rates[0]] });
    const stats = await (await fetch(`${sim.url}/_control/fleet`)).json();
    expect(stats.fleet).toMatchObject({ size: 1_000, hosts: 10, requests: 6 });
  });

  it("a bad fleet option stops start-up with its reason and leaves nothing listening", async () => {
    await expect(
      startSimulator({ manual: true, fleet: { sources: 10, shares: { hot: 2 } } }),
    ).rejects.toThrow(/fleet: shares.hot must be between 0 and 1/);
  });
});
