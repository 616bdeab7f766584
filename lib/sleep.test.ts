import { describe, expect, it } from "vitest";
import { sleep } from "./sleep";

describe("sleep", () => {
  it("ends early when aborted, and at once when already aborted", async () => {
    const stop = new AbortController();
    const started = Date.now();
    const waiting = sleep(60_000, stop.signal);
    stop.abort();
    await waiting;
    await sleep(60_000, stop.signal);
    expect(Date.now() - started).toBeLessThan(1_000);
  });
});
