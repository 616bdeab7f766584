import { spawn } from "node:child_process";
import { readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
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

  it("--sources N serves a fleet and --write-sources writes it as a sources file", async () => {
    const file = path.join(tmpdir(), `fleet-main-${process.pid}.json`);
    const child = spawn(
      process.execPath,
      [
        "--import",
        "tsx",
        "simulator/main.ts",
        "--port",
        "0",
        "--sources",
        "250",
        "--feeds-per-host",
        "50",
        "--poll-interval",
        "60",
        "--write-sources",
        file,
      ],
      { cwd: ROOT },
    );
    let out = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      out += chunk;
    });
    const exited = new Promise<number | null>((resolve) => child.on("exit", resolve));
    const deadline = Date.now() + 20_000;
    while (!/\n}\n/.test(out) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));

    expect(out).toMatch(
      /fleet: 250 feeds on 5 hosts 127\.1\.0\.1…127\.1\.0\.5 port \d+ \(one listener per address\)/,
    );
    expect(out).toContain(`fleet: wrote 250 sources to ${file}`);
    const written = JSON.parse(await readFile(file, "utf8")) as { sources: SimSource[] };
    expect(written.sources).toHaveLength(250);
    expect(written.sources[0]).toMatchObject({
      id: "fleet-000000",
      kind: "feed",
      pollIntervalSeconds: 60,
    });
    const feed = await fetch(written.sources[3]?.url as string);
    expect(feed.status).toBe(200);

    child.kill("SIGTERM");
    expect(await exited).toBe(0);
  });

  it("refuses fleet flags without --sources, and a fleet it cannot make", async () => {
    for (const [args, message] of [
      [["--write-sources", "x.json"], /--write-sources needs --sources N/],
      [["--sources", "10", "--feeds-per-host", "0"], /fleet: feedsPerHost must be a whole number/],
    ] as const) {
      const child = spawn(
        process.execPath,
        ["--import", "tsx", "simulator/main.ts", "--port", "0", ...args],
        {
          cwd: ROOT,
        },
      );
      let err = "";
      child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
        err += chunk;
      });
      const code = await new Promise((resolve) => child.on("exit", resolve));
      expect(code).not.toBe(0);
      expect(err).toMatch(message);
    }
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
