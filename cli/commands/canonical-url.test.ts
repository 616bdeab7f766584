import { spawnSync } from "node:child_process";
import path from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = path.resolve(import.meta.dirname, "../..");

function cli(input: string) {
  const r = spawnSync("npm", ["run", "-s", "cli", "--", "canonical-url"], {
    cwd: ROOT,
    input,
    encoding: "utf8",
  });
  return { code: r.status, out: r.stdout };
}

describe("cli canonical-url", () => {
  it("prints one canonical URL or !error per input line", () => {
    const input = [
      "HTTP://Example.COM/News/?utm_source=x&b=2&a=1#frag",
      "../story/\thttps://ex.com/a/b/",
      "",
      "not a url",
      "   ",
      "https://ex.com/?fbclid=abc\r",
    ].join("\n");
    const { code, out } = cli(`${input}\n`);
    expect(code).toBe(0);
    expect(out).toBe(
      [
        "http://example.com/News?a=1&b=2",
        "https://ex.com/a/story",
        "!error: empty",
        "!error: Invalid URL",
        "!error: empty",
        "https://ex.com/",
        "",
      ].join("\n"),
    );
  });

  it("handles input without a final newline and empty input", () => {
    expect(cli("https://ex.com/x/").out).toBe("https://ex.com/x\n");
    expect(cli("").out).toBe("");
  });
});
