import { describe, expect, it } from "vitest";
import { Batcher } from "./batcher";

const tick = () => new Promise((r) => setTimeout(r, 5));

describe("Batcher", () => {
  it("groups what is handed over in one turn, then what arrives while a batch runs", async () => {
    const batches: number[][] = [];
    let release: () => void = () => undefined;
    const batcher = new Batcher<number, number>(
      async (items) => {
        batches.push(items);
        if (batches.length === 1) await new Promise<void>((r) => (release = r));
        return items.map((i) => i * 10);
      },
      { maxBatch: 3, maxInFlight: 1 },
    );
    const first = [0, 1].map((i) => batcher.submit(i));
    await tick();
    const rest = [2, 3, 4, 5, 6].map((i) => batcher.submit(i));
    expect(batcher.backlog).toBe(5);
    release();
    expect(await Promise.all([...first, ...rest])).toEqual([0, 10, 20, 30, 40, 50, 60]);
    expect(batches).toEqual([
      [0, 1],
      [2, 3, 4],
      [5, 6],
    ]);
  });

  it("runs at most maxInFlight batches at once", async () => {
    let running = 0;
    let most = 0;
    const batcher = new Batcher<number, number>(
      async (items) => {
        running++;
        most = Math.max(most, running);
        await tick();
        running--;
        return items;
      },
      { maxBatch: 2, maxInFlight: 2 },
    );
    await Promise.all(Array.from({ length: 12 }, (_, i) => batcher.submit(i)));
    expect(most).toBe(2);
  });

  it("answers an item's own error to that item only", async () => {
    const batcher = new Batcher<number, number>(
      async (items) => items.map((i) => (i === 2 ? new Error("two is bad") : i)),
      { maxBatch: 8, maxInFlight: 1 },
    );
    const settled = await Promise.allSettled([1, 2, 3].map((i) => batcher.submit(i)));
    expect(settled.map((s) => s.status)).toEqual(["fulfilled", "rejected", "fulfilled"]);
  });

  it("when a whole batch fails, tries its items alone, so the fault stays with its item", async () => {
    const calls: number[][] = [];
    let release: () => void = () => undefined;
    const batcher = new Batcher<number, number>(
      async (items) => {
        calls.push(items);
        if (calls.length === 1) await new Promise<void>((r) => (release = r));
        if (items.includes(3)) throw new Error("three breaks the transaction");
        return items;
      },
      { maxBatch: 8, maxInFlight: 1 },
    );
    const first = batcher.submit(0);
    await tick();
    const rest = [1, 2, 3, 4].map((i) => batcher.submit(i));
    release();
    const settled = await Promise.allSettled([first, ...rest]);
    expect(settled.map((s) => s.status)).toEqual([
      "fulfilled",
      "fulfilled",
      "fulfilled",
      "rejected",
      "fulfilled",
    ]);
    expect(calls).toEqual([[0], [1, 2, 3, 4], [1], [2], [3], [4]]);
  });

  it("refuses limits below one", () => {
    expect(() => new Batcher(async () => [], { maxBatch: 0, maxInFlight: 1 })).toThrow(RangeError);
  });
});
