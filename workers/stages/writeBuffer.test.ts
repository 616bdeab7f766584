import { describe, expect, it } from "vitest";
import type { Database } from "@/lib/db";
import { sleep } from "@/lib/sleep";
import type { Delivery, WriteOutcome } from "@/workers/store";
import { BufferClosedError, createWriteBuffer } from "./writeBuffer";

// The buffer alone, with a stand-in writer that records what it was given: ordering, waiting,
// failures and closing. (backpressure.test.ts runs it with the real writer and real fetches.)
const noDb = {} as Database;
const delivery = (n: number): Delivery => ({ kind: "observe", input: { n } });
const outcomeOf = (d: Delivery) => ({ result: "inserted", n: (d.input as { n: number }).n });

function recordingWriter(delayMs = 0) {
  const batches: number[][] = [];
  const write = async (ds: Delivery[]) => {
    batches.push(ds.map((d) => (d.input as { n: number }).n));
    if (delayMs) await sleep(delayMs);
    return ds.map(outcomeOf) as unknown as WriteOutcome[];
  };
  return { batches, write };
}

describe("write buffer", () => {
  it("writes in arrival order, in batches, and answers each producer with its own outcomes", async () => {
    const w = recordingWriter(5);
    const buffer = createWriteBuffer(noDb, { capacity: 10, batchSize: 4, write: w.write });
    const a = buffer.write([1, 2, 3].map(delivery));
    const b = buffer.write([4, 5, 6, 7, 8].map(delivery));
    expect((await a).map((o) => (o as unknown as { n: number }).n)).toEqual([1, 2, 3]);
    expect((await b).map((o) => (o as unknown as { n: number }).n)).toEqual([4, 5, 6, 7, 8]);
    expect(w.batches.flat()).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(Math.max(...w.batches.map((x) => x.length))).toBeLessThanOrEqual(4);
    await buffer.close();
    expect(buffer.stats()).toMatchObject({ written: 8, dropped: 0, queued: 0 });
  });

  it("makes producers wait while full, never holding more than its capacity", async () => {
    let peak = 0;
    const buffer = createWriteBuffer(noDb, {
      capacity: 20,
      batchSize: 5,
      write: async (ds) => {
        peak = Math.max(peak, buffer.stats().queued + ds.length);
        await sleep(10);
        return ds.map(outcomeOf) as unknown as WriteOutcome[];
      },
    });
    // 10 producers × 15 deliveries = 150, through a buffer of 20.
    const producers = Array.from({ length: 10 }, (_, p) =>
      buffer.write(Array.from({ length: 15 }, (_, i) => delivery(p * 100 + i))),
    );
    const answers = await Promise.all(producers);
    await buffer.close();
    expect(answers.flat()).toHaveLength(150);
    expect(peak).toBeLessThanOrEqual(20);
    const stats = buffer.stats();
    expect(stats.waits).toBeGreaterThan(0);
    expect(stats.waitedMs).toBeGreaterThan(0);
    expect(stats).toMatchObject({ written: 150, dropped: 0 });
  });

  it("takes a hand-over larger than itself in pieces", async () => {
    const w = recordingWriter();
    const buffer = createWriteBuffer(noDb, { capacity: 7, batchSize: 3, write: w.write });
    const out = await buffer.write(Array.from({ length: 30 }, (_, i) => delivery(i)));
    expect(out.map((o) => (o as unknown as { n: number }).n)).toEqual(
      Array.from({ length: 30 }, (_, i) => i),
    );
    await buffer.close();
  });

  it("tells the producers of a batch the writer could not write, and keeps going", async () => {
    let calls = 0;
    const buffer = createWriteBuffer(noDb, {
      capacity: 10,
      batchSize: 10,
      write: async (ds) => {
        calls++;
        if (calls === 1) throw new Error("connection lost");
        return ds.map(outcomeOf) as unknown as WriteOutcome[];
      },
    });
    await expect(buffer.write([delivery(1), delivery(2)])).rejects.toThrow("connection lost");
    await expect(buffer.write([delivery(3)])).resolves.toHaveLength(1);
    await buffer.close();
    expect(buffer.stats()).toMatchObject({ writeErrors: 1, written: 1, dropped: 0 });
  });

  it("on close, writes what it holds, refuses waiting and new producers, and counts them", async () => {
    // A writer that holds each batch until the test lets it go: no timing involved.
    const gates: (() => void)[] = [];
    const buffer = createWriteBuffer(noDb, {
      capacity: 5,
      batchSize: 5,
      write: async (ds) => {
        await new Promise<void>((open) => gates.push(open));
        return ds.map(outcomeOf) as unknown as WriteOutcome[];
      },
    });
    const held = buffer.write([1, 2, 3, 4, 5].map(delivery));
    while (gates.length === 0) await sleep(1); // the writer is busy with 1–5; the buffer is empty
    const queued = buffer.write([6, 7].map(delivery));
    const waiting = buffer.write([8, 9, 10, 11].map(delivery)); // 2 + 4 > 5: waits
    await sleep(1);
    expect(buffer.stats()).toMatchObject({ queued: 2, waits: 1 });
    const closed = buffer.close();
    await expect(waiting).rejects.toBeInstanceOf(BufferClosedError);
    await expect(buffer.write([delivery(12)])).rejects.toBeInstanceOf(BufferClosedError);
    gates.shift()?.();
    await expect(held).resolves.toHaveLength(5);
    while (gates.length === 0) await sleep(1);
    gates.shift()?.();
    await expect(queued).resolves.toHaveLength(2);
    await closed;
    expect(buffer.stats()).toMatchObject({ written: 7, dropped: 5 });
  });
});
