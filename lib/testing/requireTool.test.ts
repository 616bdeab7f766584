import { afterEach, describe, expect, it, vi } from "vitest";
import { requireTool, runningInCi } from "./requireTool";

afterEach(() => vi.restoreAllMocks());

describe("requireTool", () => {
  it("finds a tool on the PATH and neither skips nor warns", () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => undefined);
    const sh = requireTool("sh", "a shell test", "apt-get install dash", {
      PATH: "/usr/bin:/bin",
    });
    expect(sh.path).toMatch(/\/sh$/);
    expect(sh.skip).toBe(false);
    expect(sh.note).toBe("");
    expect(sh.need()).toBe(sh.path);
    expect(warn).not.toHaveBeenCalled();
  });

  it("outside CI, a missing tool skips loudly: a warning and the reason in the test's name", () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => undefined);
    const tool = requireTool("no-such-tool-ww", "the check", "apt-get install it", {
      PATH: "/usr/bin",
    });
    expect(tool.skip).toBe(true);
    expect(tool.note).toBe(" (SKIPPED: no-such-tool-ww is not installed)");
    expect(warn).toHaveBeenCalledOnce();
    expect(String(warn.mock.calls[0]?.[0])).toContain(
      "SKIPPED: the check, because no-such-tool-ww is not on the PATH (apt-get install it)",
    );
  });

  it("in CI, a missing tool does not skip: the test runs and fails with the reason", () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => undefined);
    const tool = requireTool("no-such-tool-ww", "the check", "apt-get install it", {
      PATH: "/usr/bin",
      CI: "true",
    });
    expect(tool.skip).toBe(false);
    expect(tool.note).toBe("");
    expect(() => tool.need()).toThrow(
      "the check needs no-such-tool-ww, which is not on the PATH: apt-get install it",
    );
    expect(warn).not.toHaveBeenCalled();
  });

  it("reads CI=true and CI=1 as CI, anything else as not", () => {
    expect(runningInCi({ CI: "true" })).toBe(true);
    expect(runningInCi({ CI: "1" })).toBe(true);
    expect(runningInCi({ CI: "TRUE" })).toBe(true);
    expect(runningInCi({ CI: "false" })).toBe(false);
    expect(runningInCi({})).toBe(false);
  });
});
