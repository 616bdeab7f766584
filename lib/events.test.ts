import { afterEach, describe, expect, it } from "vitest";
import { deliveryLabels, emit, on } from "./events";

describe("events", () => {
  const offs: (() => void)[] = [];
  afterEach(() => {
    for (const off of offs.splice(0)) off();
  });

  it("delivers typed payloads to every subscriber", () => {
    const seen: string[] = [];
    offs.push(on("buffer:waited", (e) => seen.push(`a:${e.stage}`)));
    offs.push(on("buffer:waited", (e) => seen.push(`b:${e.stage}`)));
    emit("buffer:waited", { stage: "store" });
    expect(seen).toEqual(["a:store", "b:store"]);
  });

  it("never throws: a failing subscriber is logged and the others still run", async () => {
    const seen: number[] = [];
    offs.push(
      on("buffer:dropped", () => {
        throw new Error("broken metric");
      }),
    );
    offs.push(
      on("buffer:dropped", (async () => Promise.reject(new Error("async broken"))) as never),
    );
    offs.push(on("buffer:dropped", (e) => seen.push(e.count)));
    expect(() => emit("buffer:dropped", { stage: "store", count: 3 })).not.toThrow();
    await new Promise((resolve) => setTimeout(resolve, 10)); // the rejection is caught, not unhandled
    expect(seen).toEqual([3]);
  });

  it("unsubscribes, and emitting with no subscribers is a no-op", () => {
    let n = 0;
    const off = on("buffer:dropped", () => n++);
    off();
    emit("buffer:dropped", { stage: "store", count: 1 });
    expect(n).toBe(0);
  });

  it("reads a delivery's labels defensively", () => {
    expect(deliveryLabels({ sourceId: "wire", collector: "A", origin: "poll" })).toEqual({
      source: "wire",
      collector: "A",
      origin: "poll",
    });
    expect(deliveryLabels(null)).toEqual({
      source: "unknown",
      collector: "unknown",
      origin: "unknown",
    });
    expect(deliveryLabels({ sourceId: 42 }).source).toBe("unknown");
  });
});
