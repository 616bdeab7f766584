import { describe, expect, it } from "vitest";
import {
  type CollectorFacts,
  expectedActivitySeconds,
  type SourceFacts,
  sourceHealth,
} from "./health";

const now = new Date("2026-06-12T12:00:00Z");
const ago = (s: number) => new Date(now.getTime() - s * 1000);

function stream(
  collectors: Partial<CollectorFacts>[],
  extra: Partial<SourceFacts> = {},
): SourceFacts {
  return {
    kind: "stream",
    enabled: true,
    disabledReason: null,
    breakerState: "closed",
    lastErrorAt: null,
    lastErrorCode: null,
    activityIntervalSeconds: 10, // keepalives every 10 s
    addedAt: ago(3_600),
    collectors: collectors.map((c, i) => ({
      collector: String.fromCharCode(65 + i),
      lastActivityAt: null,
      lastContentAt: null,
      usualGapSeconds: 60,
      ...c,
    })),
    ...extra,
  };
}

describe("source health", () => {
  it("tells stalled, silent, quiet and healthy apart within one keepalive interval plus margin", () => {
    // keepalive every 10 s: stalled after 15 s of nothing at all
    expect(
      sourceHealth(stream([{ lastActivityAt: ago(16), lastContentAt: ago(16) }]), now).state,
    ).toBe("stalled");
    // keepalives flowing, no news for 4 usual gaps
    expect(
      sourceHealth(stream([{ lastActivityAt: ago(2), lastContentAt: ago(240) }]), now).state,
    ).toBe("silent");
    // keepalives flowing, no news for 1.5 usual gaps: a quiet spell
    expect(
      sourceHealth(stream([{ lastActivityAt: ago(2), lastContentAt: ago(90) }]), now).state,
    ).toBe("quiet");
    expect(
      sourceHealth(stream([{ lastActivityAt: ago(2), lastContentAt: ago(30) }]), now).state,
    ).toBe("healthy");
  });

  it("spells out the times behind the state", () => {
    const h = sourceHealth(stream([{ lastActivityAt: ago(2), lastContentAt: ago(240) }]), now);
    expect(h.reason).toBe("A: active 2 s ago, no news for 4.0 min (usual gap 60 s)");
    const s = sourceHealth(stream([{ lastActivityAt: ago(40) }]), now);
    expect(s.reason).toBe("A: no activity for 40 s (expected every 10 s)");
  });

  it("is as healthy as its healthiest collector", () => {
    const h = sourceHealth(
      stream([{ lastActivityAt: ago(100) }, { lastActivityAt: ago(1), lastContentAt: ago(5) }]),
      now,
    );
    expect(h.state).toBe("healthy");
    expect(h.collectors.map((c) => c.state)).toEqual(["stalled", "healthy"]);
  });

  it("failing when the breaker is open or the latest fetch failed; disabled wins over all", () => {
    const ok = { lastActivityAt: ago(1), lastContentAt: ago(5) };
    expect(
      sourceHealth(stream([ok], { breakerState: "open", lastErrorCode: "http_503" }), now),
    ).toMatchObject({ state: "failing", reason: "breaker open after http_503" });
    expect(
      sourceHealth(stream([ok], { lastErrorAt: ago(0.5), lastErrorCode: "timeout" }), now).state,
    ).toBe("failing");
    expect(sourceHealth(stream([ok], { lastErrorAt: ago(30) }), now).state).toBe("healthy");
    expect(
      sourceHealth(stream([ok], { breakerState: "open", disabledReason: "http_410" }), now),
    ).toMatchObject({ state: "disabled", reason: "disabled after http_410" });
  });

  it("assumes a usual gap until one is learned", () => {
    const h = sourceHealth(
      stream([{ lastActivityAt: ago(1), lastContentAt: ago(2 * 3600), usualGapSeconds: null }]),
      now,
    );
    expect(h).toMatchObject({ state: "quiet" });
    expect(h.reason).toMatch(/assumed gap 60\.0 min/);
  });
});

describe("a source whose collectors have not reported yet", () => {
  it("is starting for one stalled-after span from when it was added, then stalled", () => {
    // keepalive every 10 s: stalled after 15 s; added 5 s ago with no report: starting
    const fresh = sourceHealth(stream([], { addedAt: ago(5) }), now);
    expect(fresh).toMatchObject({ state: "starting" });
    expect(fresh.reason).toMatch(/no collector has reported yet \(added 5 s ago\)/);
    expect(sourceHealth(stream([{}], { addedAt: ago(5) }), now).state).toBe("starting");
    expect(sourceHealth(stream([], { addedAt: ago(16) }), now)).toMatchObject({
      state: "stalled",
      reason: "no collector has reported yet",
    });
    expect(sourceHealth(stream([{}], { addedAt: ago(16) }), now).state).toBe("stalled");
  });

  it("a collector that reported before the source was added again is judged as usual", () => {
    const h = sourceHealth(stream([{ lastActivityAt: ago(40) }], { addedAt: ago(5) }), now);
    expect(h.state).toBe("stalled");
  });
});

describe("expectedActivitySeconds", () => {
  it("is a stream's keepalive, or the poll interval the scheduler keeps (never under its floor)", () => {
    expect(expectedActivitySeconds("stream", 300)).toBe(15);
    expect(expectedActivitySeconds("feed", 300)).toBe(300);
    // Configured 10 s, polled every 15 s: judged by 15 s, so it does not flicker to stalled.
    expect(expectedActivitySeconds("page", 10)).toBe(15);
    // The scheduler's own longer delay: a WebSub-pushed feed polled 4× slower, a max-age hint.
    expect(expectedActivitySeconds("feed", 300, 1_200)).toBe(1_200);
    expect(expectedActivitySeconds("feed", 300, 60)).toBe(300);
    expect(expectedActivitySeconds("stream", 300, 1_200)).toBe(15);
  });
});
