import { afterEach, describe, expect, it, vi } from "vitest";
import * as log from "../logger";
import { BUILT_IN_PRICES, costOf, priceOf } from "./prices";

afterEach(() => vi.restoreAllMocks());

describe("prices", () => {
  it("prices the built-in models per million tokens, input and output", () => {
    expect(priceOf("gpt-4o-mini", BUILT_IN_PRICES)).toEqual({ input: 0.15, output: 0.6 });
    expect(priceOf("sim-extract-1", BUILT_IN_PRICES)).toEqual({ input: 0.15, output: 0.6 });
    // 1,000 tokens in and 200 out of gpt-4o: 1000·2.5/1e6 + 200·10/1e6.
    expect(costOf("gpt-4o", 1_000, 200, BUILT_IN_PRICES)).toBeCloseTo(0.0045, 10);
    expect(costOf("gpt-4.1-nano", 1_000_000, 1_000_000, BUILT_IN_PRICES)).toBeCloseTo(0.5, 10);
  });

  it("lets a configured table override and extend the built-in one", () => {
    const table = {
      ...BUILT_IN_PRICES,
      "gpt-4o-mini": { input: 1, output: 2 },
      mine: { input: 3, output: 0 },
    };
    expect(costOf("gpt-4o-mini", 1_000_000, 1_000_000, table)).toBe(3);
    expect(costOf("mine", 2_000_000, 5, table)).toBe(6);
  });

  it("costs an unknown model 0 and warns once per model, not on every call", () => {
    const warn = vi.fn();
    vi.spyOn(log, "logger").mockReturnValue({ warn } as unknown as ReturnType<typeof log.logger>);
    expect(costOf("no-such-model-a", 1_000, 1_000)).toBe(0);
    expect(costOf("no-such-model-a", 5_000, 1_000)).toBe(0);
    expect(priceOf("no-such-model-b")).toBeNull();
    expect(warn).toHaveBeenCalledTimes(2);
    expect(warn.mock.calls[0]?.[1]).toContain('no price for the model "no-such-model-a"');
  });

  it("never costs negative tokens", () => {
    expect(costOf("gpt-4o-mini", -5, -5, BUILT_IN_PRICES)).toBe(0);
  });
});
