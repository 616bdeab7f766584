import { describe, expect, it } from "vitest";
import { DEAD_LETTER_AUDIT_ACTIONS, KNOWN_AUDIT_ACTIONS } from "./audit";
import { REPAIR_ACTIONS } from "./repairs";
import { SOURCE_AUDIT_ACTIONS } from "./sources";

describe("KNOWN_AUDIT_ACTIONS (the Audit page's action filter)", () => {
  it("offers every action the admin operations write, each once", () => {
    const written = [
      ...Object.values(DEAD_LETTER_AUDIT_ACTIONS),
      ...Object.values(REPAIR_ACTIONS),
      ...Object.values(SOURCE_AUDIT_ACTIONS),
      "chaos.set",
      "chaos.clear",
      "dedup.undo",
      "dedup.review_confirm",
      "dedup.review_reject",
      "dedup.thresholds",
      "dedup.rerun_dry_run",
      "dedup.rerun_apply",
      "queues.pause",
      "queues.resume",
      "websub.subscribed",
      "websub.denied",
      "websub.failed",
      "websub.unsubscribed",
      "websub.push_refused",
    ];
    expect([...KNOWN_AUDIT_ACTIONS].sort()).toEqual([...new Set(written)].sort());
    expect(KNOWN_AUDIT_ACTIONS).toContain("sources.fetch_now");
    expect(KNOWN_AUDIT_ACTIONS).toContain("sources.pause");
    expect(KNOWN_AUDIT_ACTIONS).toContain("sources.resume");
  });
});
