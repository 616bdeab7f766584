import { describe, expect, it } from "vitest";
import { Scheduler } from "./scheduler";

describe("Scheduler", () => {
  it("runs events in time order, same-instant ones in the order scheduled", () => {
    const s = new Scheduler(1_000);
    const ran: string[] = [];
    s.at(1_300, () => ran.push("c"));
    s.at(1_100, () => ran.push("a"));
    s.at(1_100, () => ran.push("b"));
    s.at(1_100, () => s.after(50, () => ran.push(`d@${s.now}`)));
    s.runUntil(1_200);
    expect(ran).toEqual(["a", "b", "d@1150"]);
    expect(s.now).toBe(1_200);
    expect(s.nextAt()).toBe(1_300);
  });

  it("keeps going when an event throws, and reports it", () => {
    const errors: unknown[] = [];
    const s = new Scheduler(0, (err) => errors.push(err));
    const ran: number[] = [];
    s.at(1, () => {
      throw new Error("boom");
    });
    s.at(2, () => ran.push(2));
    s.runUntil(10);
    expect(ran).toEqual([2]);
    expect((errors[0] as Error).message).toBe("boom");
  });
});
