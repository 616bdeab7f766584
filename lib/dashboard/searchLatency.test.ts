import { afterEach, describe, expect, it } from "vitest";
import { emit } from "@/lib/events";
import {
  LatencyRing,
  percentile,
  SEARCH_LATENCY_KEPT,
  searchLatency,
  stopTrackingSearchLatency,
  trackSearchLatency,
} from "./searchLatency";

afterEach(() => stopTrackingSearchLatency());

describe("LatencyRing", () => {
  it("summarises nothing as nothing", () => {
    expect(new LatencyRing(4).summary()).toEqual({
      count: 0,
      kept: 4,
      seen: 0,
      p50Ms: null,
      p95Ms: null,
      maxMs: null,
      fullTextOnly: 0,
      oldestAt: null,
      newestAt: null,
    });
  });

  it("keeps the last `capacity` searches, the oldest overwritten first", () => {
    const ring = new LatencyRing(3);
    ring.add(1, false, 1_000);
    ring.add(0.002, true, 2_000);
    ring.add(0.003, false, 3_000);
    ring.add(0.004, true, 4_000);
    const s = ring.summary();
    // The 1-second search fell out: the max is what is left.
    expect(s).toMatchObject({ count: 3, kept: 3, seen: 4, fullTextOnly: 2 });
    expect(s.maxMs).toBeCloseTo(4, 9);
    expect(s.p50Ms).toBeCloseTo(3, 9);
    expect(s.oldestAt).toBe(new Date(2_000).toISOString());
    expect(s.newestAt).toBe(new Date(4_000).toISOString());
  });

  it("refuses a time that is not a finite, non-negative number of seconds, and a bad capacity", () => {
    const ring = new LatencyRing(3);
    for (const bad of [Number.NaN, Number.POSITIVE_INFINITY, -0.1]) ring.add(bad, false);
    expect(ring.summary().count).toBe(0);
    for (const bad of [0, -1, 1.5, Number.NaN]) {
      expect(() => new LatencyRing(bad)).toThrow(RangeError);
    }
  });
});

describe("percentile", () => {
  it("interpolates between ranks as percentile_cont does", () => {
    expect(percentile([], 0.5)).toBeNull();
    expect(percentile([7], 0.95)).toBe(7);
    expect(percentile([1, 2, 3, 4], 0.5)).toBe(2.5);
    // 0.95 × 19 = 18.05: between the 19th and 20th of 1..20.
    expect(
      percentile(
        Array.from({ length: 20 }, (_, i) => i + 1),
        0.95,
      ),
    ).toBeCloseTo(19.05, 9);
  });
});

describe("searchLatency", () => {
  it("hears search:done on the bus from the first start, once however often it is started", () => {
    trackSearchLatency();
    trackSearchLatency();
    emit("search:done", { seconds: 0.05, model: "m", backend: "portable", hits: 1 });
    emit("search:done", { seconds: 0.15, model: null, backend: "portable", hits: 0 });
    const s = searchLatency();
    expect(s).toMatchObject({ count: 2, seen: 2, kept: SEARCH_LATENCY_KEPT, fullTextOnly: 1 });
    expect(s.p50Ms).toBeCloseTo(100, 9);
    stopTrackingSearchLatency();
    emit("search:done", { seconds: 0.05, model: "m", backend: "portable", hits: 1 });
    expect(searchLatency().count).toBe(0);
  });
});
