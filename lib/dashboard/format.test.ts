import { describe, expect, it } from "vitest";
import { age, clock, day, duration, relative, usd, utc, when } from "./format";

describe("when", () => {
  it("shows an instant as UTC to the second, or to the millisecond for a timeline", () => {
    expect(when("2026-12-01T11:39:59.123Z")).toBe("2026-12-01 11:39:59 UTC");
    expect(when("2026-12-01T11:39:59.123Z", "ms")).toBe("2026-12-01 11:39:59.123 UTC");
  });

  it("shows a dash for no time", () => {
    expect(when(null)).toBe("—");
    expect(when(undefined, "ms")).toBe("—");
    expect(when("")).toBe("—");
  });
});

describe("utc", () => {
  it("is the same text as when, and no attribute at all for no time", () => {
    expect(utc("2026-12-01T11:39:59.000Z")).toBe("2026-12-01 11:39:59 UTC");
    expect(utc(null)).toBeUndefined();
  });
});

describe("age", () => {
  it("is a duration, or a dash when nothing has aged yet", () => {
    expect(age(42)).toBe("42 s");
    expect(age(290)).toBe("4.8 min");
    expect(age(9000)).toBe("2.5 h");
    expect(age(3 * 86_400)).toBe("3.0 d");
    expect(age(0)).toBe("0 s");
    expect(age(null)).toBe("—");
  });
});

describe("relative", () => {
  it("says how far an instant is from the answer's own time", () => {
    const now = "2026-12-01T12:00:00.000Z";
    expect(relative("2026-12-01T11:59:18.000Z", now)).toBe("42 s ago");
    expect(relative("2026-12-01T12:05:00.000Z", now)).toBe(`in ${duration(300)}`);
    expect(relative(null, now)).toBe("–");
  });
});

describe("usd", () => {
  it("shows cents from a cent up and a fraction of a cent below it", () => {
    expect(usd(0)).toBe("$0");
    expect(usd(1.254)).toBe("$1.25");
    expect(usd(0.01)).toBe("$0.01");
    expect(usd(0.0042)).toBe("$0.0042");
    expect(usd(0.000_15)).toBe("$0.00015");
    expect(usd(1234.5)).toBe("$1,235");
    expect(usd(null)).toBe("–");
  });
});

describe("clock and day", () => {
  it("label a chart's axis in UTC whatever the machine's zone", () => {
    const t = Date.parse("2026-12-01T23:59:30Z");
    expect(clock(t)).toBe("23:59");
    expect(day(t)).toBe("2026-12-01");
  });
});
