import { spawn } from "node:child_process";
import path from "node:path";
import { describe, expect, it } from "vitest";
import type { SimSource } from "./server";

const ROOT = path.resolve(import.meta.dirname, "..");

describe("npm run simulator (simulator/main.ts)", () => {
  it("prints its URL and sources, serves them, and stops cleanly on SIGTERM", async () => {
    const child = spawn(process.execPath, ["--import", "tsx", "simulator/main.ts", "--port", "0"], {
      cwd: ROOT,
    });
    let out = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      out += chunk;
    });
    const exited = new Promise<number | null>((resolve) => child.on("exit", resolve));
    const deadline = Date.now() + 20_000;
    while (!/\n}\n/.test(out) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));

    const url = /newsroom simulator on (http:\/\/127\.0\.0\.1:\d+)/.exec(out)?.[1];
    expect(url).toBeDefined();
    const printed = JSON.parse(out.slice(out.indexOf("{"))) as { sources: SimSource[] };
    expect(printed.sources.map((s) => s.id)).toContain("wire");
    const served = await (await fetch(`${url}/sources`)).json();
    expect(served.sources).toEqual(printed.sources);

    child.kill("SIGTERM");
    expect(await exited).toBe(0);
    expect(out).toContain("simulator: SIGTERM, stopping");
  });

  it("refuses a bad flag with its usage", async () => {
    const child = spawn(process.execPath, ["--import", "tsx", "simulator/main.ts", "--port", "x"], {
      cwd: ROOT,
    });
    let err = "";
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      err += chunk;
    });
    expect(await new Promise((resolve) => child.on("exit", resolve))).toBe(2);
    expect(err).toMatch(/--port must be a number/);
    expect(err).toMatch(/usage: npm run simulator/);
  });
});
