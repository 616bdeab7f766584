import { describe, expect, it } from "vitest";
import { MEASURE_COLORS, outcomeColor, STATUS_COLORS, seriesColors, statusOf } from "./palette";

describe("palette", () => {
  it("never gives a 5xx the colour of ok", () => {
    for (const code of ["http_5xx", "http_503", "5xx", "500", "errors", "failed"]) {
      expect(statusOf(code), code).toBe("failed");
      expect(outcomeColor(code)).not.toBe(STATUS_COLORS.ok);
    }
  });

  it("reads the fetch codes, the read path's outcomes and the queue's words", () => {
    expect(statusOf("ok")).toBe("ok");
    expect(statusOf("200")).toBe("ok");
    expect(statusOf("notModified")).toBe("unchanged");
    expect(statusOf("not_modified")).toBe("unchanged");
    expect(statusOf("http_429")).toBe("refused");
    expect(statusOf("http_404")).toBe("refused");
    expect(statusOf("timeout")).toBe("unreachable");
    expect(statusOf("parse_error")).toBe("failed");
    expect(statusOf("breaker_open")).toBe("skipped");
    expect(statusOf("processed")).toBe("ok");
    expect(statusOf("deadLettered")).toBe("dead");
    expect(statusOf("hit")).toBe("ok");
    expect(statusOf("stale")).toBe("waiting");
  });

  it("leaves measures to the measure sequence, counted among themselves", () => {
    expect(statusOf("p50")).toBeUndefined();
    expect(seriesColors(["p50", "p99"])).toEqual([MEASURE_COLORS[0], MEASURE_COLORS[1]]);
    expect(seriesColors(["ok", "p50"])).toEqual([STATUS_COLORS.ok, MEASURE_COLORS[0]]);
  });

  it("keeps measures out of the status colours", () => {
    const statuses = new Set<string>(Object.values(STATUS_COLORS));
    for (const c of MEASURE_COLORS) expect(statuses.has(c)).toBe(false);
  });
});
