import { get } from "node:http";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { afterEach, describe, expect, it } from "vitest";
import { type Simulator, startSimulator } from "../server";

// A fleet of 100,000 feeds must cost the simulator little: nothing is stored per feed but a
// poll counter, and the request log is a bounded ring. Measured with a forced GC so the figures
// are what is retained, not what is waiting to be collected.
setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;
const heapMb = () => {
  gc();
  gc();
  return process.memoryUsage().heapUsed / 1e6;
};

const running: Simulator[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.stop()));
});

describe("fleet memory", () => {
  it("100,000 feeds: sources() and 3,000 requests within a bounded heap", async () => {
    const before = heapMb();
    const sim = await startSimulator({
      seed: 1,
      manual: true,
      clock: () => Date.parse("2026-06-12T09:00:00Z"),
      fleet: { sources: 100_000 },
    });
    running.push(sim);
    const fleet = sim.fleet as NonNullable<Simulator["fleet"]>;
    expect(fleet.hosts).toBe(1_000);
    const started = heapMb() - before;

    let sources: ReturnType<typeof fleet.sources> | null = fleet.sources();
    expect(sources).toHaveLength(100_000);
    const withList = heapMb() - before;

    // 3,000 polls of feeds that answer at once, 50 at a time, half of them conditional.
    const quick = (i: number) => {
      const p = fleet.profile(i);
      return p.behaviour !== "slow" && p.behaviour !== "large" && p.failure !== "timeout";
    };
    const feeds: string[] = [];
    for (let i = 0; feeds.length < 1_500; i = (i + 7_919) % 100_000) {
      if (quick(i)) feeds.push(sources[i]?.url as string);
    }
    const targets = [...feeds, ...feeds];
    // node:http without keep-alive, so the client keeps no pool per host (1,000 of them) in
    // this process's heap; the second round is conditional.
    const etags = new Map<string, string>();
    const poll = (url: string) =>
      new Promise<void>((resolve, reject) => {
        const etag = etags.get(url);
        const req = get(
          url,
          { agent: false, headers: etag ? { "if-none-match": etag } : {} },
          (res) => {
            const got = res.headers.etag;
            if (got) etags.set(url, got);
            res.resume().on("end", resolve);
          },
        );
        req.on("error", reject);
      });
    for (let n = 0; n < targets.length; n += 50) {
      await Promise.all(targets.slice(n, n + 50).map(poll));
    }
    expect(fleet.stats().requests).toBe(3_000);
    expect(fleet.stats().answers["304"]).toBeGreaterThan(1_000);
    sources = null;
    const afterRequests = heapMb() - before;

    console.log(
      `fleet of 100,000: heap +${started.toFixed(1)} MB started, +${withList.toFixed(1)} MB with sources(), ` +
        `+${afterRequests.toFixed(1)} MB after 3,000 requests (list dropped)`,
    );
    // Loose bounds: the list is about 50 MB of small objects; the fleet itself a few MB
    // (400 KB of poll counters, the request log's ring, per-host rates).
    expect(started).toBeLessThan(10);
    expect(withList).toBeLessThan(100);
    expect(afterRequests).toBeLessThan(15);
  }, 30_000);
});
