import { describe, expect, it } from "vitest";
import type { Delivery, WriteOutcome } from "@/workers/store";
import { StreamWrites } from "./streamWrites";

const event = (guid: string): Delivery => ({ kind: "observe", input: { guid } });
const guids = (batch: Delivery[]) => batch.map((d) => (d.input as { guid: string }).guid);

describe("StreamWrites", () => {
  it("one batch in flight at a time, in arrival order; the position moves once written", async () => {
    const written: string[][] = [];
    let release: () => void = () => {};
    const gate = new Promise<void>((r) => {
      release = r;
    });
    const writes = new StreamWrites(
      async (batch) => {
        if (written.length === 0) await gate; // the first batch is slow
        written.push(guids(batch));
        return [] as WriteOutcome[];
      },
      async () => {},
      { maxEvents: 2, maxWaitMs: 60_000 },
    );
    const first = writes.add(event("a"), 1).then(() => writes.add(event("b"), 2));
    await new Promise((r) => setTimeout(r, 10));
    expect(writes.lastSeq).toBeNull(); // handed over, not durable
    await writes.add(event("c"), 3);
    const last = writes.flush();
    release();
    await Promise.all([first, last]);
    expect(written).toEqual([["a", "b"], ["c"]]);
    expect(writes.lastSeq).toBe(3);
  });

  it("after a failed batch nothing more is written and the position stays where it was", async () => {
    const written: string[][] = [];
    const writes = new StreamWrites(
      async (batch) => {
        if (guids(batch).includes("b")) throw new Error("the database went away");
        written.push(guids(batch));
        return [] as WriteOutcome[];
      },
      async () => {},
      { maxEvents: 1, maxWaitMs: 60_000 },
    );
    await writes.add(event("a"), 1);
    await expect(writes.add(event("b"), 2)).rejects.toThrow("went away");
    await expect(writes.add(event("c"), 3)).rejects.toThrow("went away");
    await expect(writes.flush()).rejects.toThrow("went away");
    expect(written).toEqual([["a"]]);
    expect(writes.lastSeq).toBe(1);
  });

  it("a batch that is not full goes after maxWaitMs, and its failure surfaces at the next call", async () => {
    const writes = new StreamWrites(
      async () => {
        throw new Error("refused");
      },
      async () => {},
      { maxEvents: 100, maxWaitMs: 5 },
    );
    await writes.add(event("a"), 1);
    expect(writes.waiting).toBe(1);
    await new Promise((r) => setTimeout(r, 30));
    expect(writes.waiting).toBe(0);
    await expect(writes.add(event("b"), 2)).rejects.toThrow("refused");
  });
});
