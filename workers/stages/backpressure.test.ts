import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "@/lib/testing/db";
import { type BackpressureSettings, runBackpressure } from "./testing/backpressureScenario";

// The acceptance check for backpressure, with real fetches and the real writer: when the writer
// is 100× slower the fetchers wait on the bounded buffer, memory stays near the unthrottled
// run's, and every observation arrives. (`npm run -s bench -- backpressure` runs it bigger, with
// the writer slow throughout.) Here the writer is slow for the first 6 s and then recovers, so
// the run finishes in reasonable time: the fetchers are done fetching long before that, so for
// the whole time they could pile up, the writer is 100× slower.

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(() => db?.drop());

const settings: BackpressureSettings = {
  feeds: 20,
  entries: 30,
  summaryChars: 15_000,
  slowdown: 1,
  bufferCapacity: 50,
  batchSize: 25,
  fetchConcurrency: 8,
  timeoutMs: 240_000,
};
const MB = 2 ** 20;

describe("backpressure between fetch and store", () => {
  it("makes the fetchers wait for a 100× slower writer, within 50 MB of the unthrottled run, dropping nothing", async () => {
    const fast = await runBackpressure(db, settings);
    const slow = await runBackpressure(db, { ...settings, slowdown: 100, slowForMs: 6_000 });
    console.log(
      `backpressure: unthrottled peak ${(fast.peakMemoryBytes / MB).toFixed(1)} MB in ${fast.durationMs} ms; ` +
        `100× slower writer peak ${(slow.peakMemoryBytes / MB).toFixed(1)} MB in ${slow.durationMs} ms ` +
        `(writing ${slow.writeMs} ms + ${slow.throttledMs} ms of slowdown), ` +
        `${slow.waits} waits (${slow.waitedMs} ms), ${slow.dropped} dropped, peak queued ${slow.peakQueued}/${settings.bufferCapacity}`,
    );
    for (const run of [fast, slow]) {
      expect(run.observations).toBe(run.expected);
      expect(run.dropped).toBe(0);
      expect(run.peakQueued).toBeLessThanOrEqual(settings.bufferCapacity);
    }
    expect(await db.prisma.news.count()).toBe(settings.feeds * settings.entries);
    expect(slow.waits).toBeGreaterThan(0);
    expect(slow.peakMemoryBytes - fast.peakMemoryBytes).toBeLessThan(50 * MB);
  });

  it("without the bound, the same slow writer lets everything pile up in memory (the control)", async () => {
    const unbounded = await runBackpressure(db, {
      ...settings,
      bufferCapacity: 1_000_000,
      // Every feed fetched at once and nothing to wait for: all of it queues in memory.
      fetchConcurrency: settings.feeds,
      slowdown: 100,
      slowForMs: 6_000,
    });
    console.log(
      `backpressure control (unbounded buffer): peak ${(unbounded.peakMemoryBytes / MB).toFixed(1)} MB, ` +
        `peak queued ${unbounded.peakQueued}`,
    );
    expect(unbounded.observations).toBe(unbounded.expected);
    // Most of the workload sat in memory at once: what the bound prevents.
    expect(unbounded.peakQueued).toBeGreaterThan(unbounded.expected / 2);
  });
});
