import { describe, expect, it } from "vitest";
import { pollingNote } from "./pollNote";

const now = new Date("2026-12-10T10:00:00Z");

describe("pollingNote", () => {
  it("says so when a hot source is polled faster than its configured interval", () => {
    expect(
      pollingNote({
        configuredSeconds: 60,
        everySeconds: 15,
        hotUntil: new Date("2026-12-10T10:08:00Z"),
        now,
      }),
    ).toBe("polled every 15 s while hot (until 10:08 UTC), faster than the configured 1 min");
  });

  it("says nothing when polling keeps to the configured interval or slower", () => {
    expect(
      pollingNote({ configuredSeconds: 60, everySeconds: 60, hotUntil: null, now }),
    ).toBeNull();
    expect(
      pollingNote({ configuredSeconds: 60, everySeconds: 600, hotUntil: null, now }),
    ).toBeNull();
    expect(
      pollingNote({ configuredSeconds: 60, everySeconds: null, hotUntil: null, now }),
    ).toBeNull();
    // jitter (±10%) is not "faster"
    expect(
      pollingNote({ configuredSeconds: 60, everySeconds: 55, hotUntil: null, now }),
    ).toBeNull();
  });

  it("a faster poll after a hot spell ended is still shown, without the reason", () => {
    expect(
      pollingNote({
        configuredSeconds: 60,
        everySeconds: 15,
        hotUntil: new Date("2026-12-10T09:59:00Z"),
        now,
      }),
    ).toBe("polled every 15 s, faster than the configured 1 min");
  });
});
