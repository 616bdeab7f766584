import { describe, expect, it } from "vitest";
import { DEPTH_MAX_POINTS, depthBucketSeconds } from "@/workers/queue/depthSeries";
import {
  nearestHours,
  parseTimeRange,
  RANGE_HOURS,
  TIME_RANGES,
  withTimeRange,
} from "./timeRanges";

describe("the dashboard's time ranges", () => {
  it("reads only the four ranges from a URL", () => {
    expect(TIME_RANGES.map(parseTimeRange)).toEqual(["1h", "6h", "24h", "7d"]);
    for (const bad of [null, undefined, "", "2h", "7D", "1h ", "24", "constructor"]) {
      expect(parseTimeRange(bad)).toBeNull();
    }
  });

  it("carries the range on a link, keeping its path, other parameters and fragment", () => {
    expect(withTimeRange("/queues", "6h")).toBe("/queues?range=6h");
    expect(withTimeRange("/", "7d")).toBe("/?range=7d");
    expect(withTimeRange("/sources/a%20b?tab=fetch#chart", "24h")).toBe(
      "/sources/a%20b?tab=fetch&range=24h#chart",
    );
    expect(withTimeRange("/queues?range=1h", "6h")).toBe("/queues?range=6h");
    // Nothing chosen: the link stays as written (the page opens on its own default).
    expect(withTimeRange("/queues", null)).toBe("/queues");
  });

  it("maps a range onto the windows a page has: the longest within it, else the shortest", () => {
    const dedup = [6, 24, 72];
    expect(TIME_RANGES.map((r) => nearestHours(r, dedup))).toEqual([6, 6, 24, 72]);
    const readPath = [1, 6, 24];
    expect(TIME_RANGES.map((r) => nearestHours(r, readPath))).toEqual([1, 6, 24, 24]);
    const costs = [24, 168, 720];
    expect(TIME_RANGES.map((r) => nearestHours(r, costs))).toEqual([24, 24, 24, 168]);
  });

  it("gives depth buckets that keep every range within its points", () => {
    expect(TIME_RANGES.map((r) => depthBucketSeconds(RANGE_HOURS[r] * 3600))).toEqual([
      60, 120, 600, 3600,
    ]);
    for (const r of TIME_RANGES) {
      const seconds = RANGE_HOURS[r] * 3600;
      expect(seconds / depthBucketSeconds(seconds)).toBeLessThanOrEqual(DEPTH_MAX_POINTS);
    }
    // Past the table (a year): still within the bound.
    const year = 365 * 86_400;
    expect(year / depthBucketSeconds(year)).toBeLessThanOrEqual(DEPTH_MAX_POINTS);
  });
});
