import type { Logger } from "pino";
import { describe, expect, it, vi } from "vitest";
import { emit } from "@/lib/events";
import { logQueueLifecycle } from "./lifecycleLog";

describe("logQueueLifecycle", () => {
  it("turns this worker's job events into its log lines, and ignores other workers'", () => {
    const log = { warn: vi.fn(), info: vi.fn() };
    const off = logQueueLifecycle("w1", log as unknown as Logger);
    emit("job:dead", { queue: "fetch", attempt: 5, error: "timeout", workerId: "w1", jobId: "7" });
    emit("job:dead", { queue: "fetch", attempt: 5, error: "timeout", workerId: "w2", jobId: "8" });
    emit("job:lost", { queue: "fetch", reason: "lease taken over", workerId: "w1", jobId: "9" });
    emit("job:expired", {
      queue: "fetch",
      count: 3,
      parked: 1,
      leaseAgesMs: [1, 2, 3],
      workerId: "w1",
    });
    emit("job:released", { queue: "fetch", count: 2, workerId: "w1" });
    off();
    emit("job:lost", { queue: "fetch", reason: "after unsubscribe", workerId: "w1", jobId: "10" });
    expect(log.warn.mock.calls).toEqual([
      [{ job: "7", queue: "fetch", attempt: 5, error: "timeout" }, "job parked as a dead letter"],
      [{ job: "9", queue: "fetch", reason: "lease taken over" }, "lease given up; handler aborted"],
    ]);
    expect(log.info.mock.calls).toEqual([
      [{ queue: "fetch", returned: 2, parked: 1 }, "expired leases swept"],
      [{ queue: "fetch", released: 2 }, "leases released"],
    ]);
  });
});
