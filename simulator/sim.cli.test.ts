import { execFile } from "node:child_process";
import { createServer } from "node:net";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Simulator, startSimulator } from "./server";

// `npm run -s cli -- sim …` as an operator runs it: a real process against a running simulator,
// exit codes and output read as they would be.

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, "..");
let sim: Simulator;

function cli(...args: string[]) {
  return run(process.execPath, ["--import", "tsx", "cli/index.ts", "sim", ...args], {
    cwd: ROOT,
    env: { ...process.env, LOG_LEVEL: "silent" },
  }).then(
    (r) => ({ code: 0, stdout: r.stdout, stderr: r.stderr }),
    (e) => ({ code: e.code as number, stdout: e.stdout as string, stderr: e.stderr as string }),
  );
}

beforeAll(async () => {
  sim = await startSimulator({ seed: 41 });
});
afterAll(() => sim.stop());

describe("npm run -s cli -- sim", () => {
  it("sets, lists and clears faults on a running simulator", async () => {
    const [down, slow] = await Promise.all([
      cli("fault", "wire-page", "503", "--url", sim.url),
      cli("fault", "meridian-rss", "latency", "2000", "--url", sim.url, "--json"),
    ]);
    expect(down).toMatchObject({ code: 0, stdout: "wire-page: 503\n" });
    expect(JSON.parse(slow.stdout)).toEqual({
      sourceId: "meridian-rss",
      fault: { kind: "latency", ms: 2000 },
    });
    expect((await fetch(`${sim.url}/s/wire-page/`)).status).toBe(503);

    const listed = await cli("faults", "--url", sim.url);
    expect(listed.stdout).toBe("meridian-rss: latency 2000 ms\nwire-page: 503\n");

    const cleared = await cli("clear", "wire-page", "--url", sim.url);
    expect(cleared).toMatchObject({ code: 0, stdout: "wire-page: cleared 1 fault(s)\n" });
    expect((await fetch(`${sim.url}/s/wire-page/`)).status).toBe(200);
    expect((await cli("clear", "--all", "--url", sim.url)).code).toBe(0);
    expect(sim.control.faults()).toEqual([]);
  });

  it("publishes a story and sets the rate", async () => {
    const [published, rate] = await Promise.all([
      cli(
        "publish",
        "--outlet",
        "ledger",
        "--language",
        "bn",
        "--title",
        "সিএলআই থেকে খবর",
        "--json",
        "--url",
        sim.url,
      ),
      cli("rate", "20", "--url", sim.url),
    ]);
    expect(JSON.parse(published.stdout).story).toMatchObject({
      outlet: "ledger",
      title: "সিএলআই থেকে খবর",
      language: "bn",
    });
    expect(rate.stdout).toBe("20 stories per minute\n");
    expect(sim.control.rate()).toBe(20);
  });

  it("fails clearly on bad arguments, a refused request and an unreachable simulator", async () => {
    const closedPort = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, "127.0.0.1", () => {
        const { port } = probe.address() as { port: number };
        probe.close(() => resolve(port));
      });
    });
    const [missing, noMs, refused, unknown, away] = await Promise.all([
      cli("fault", "wire"),
      cli("fault", "wire", "latency", "--url", sim.url),
      cli("fault", "meridian-rss", "stall", "--url", sim.url),
      cli("fault", "nope", "503", "--url", sim.url),
      cli("faults", "--url", `http://127.0.0.1:${closedPort}`),
    ]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/sim fault takes SOURCE_ID KIND/);
    expect(missing.stderr).toMatch(/usage: npm run -s cli/);
    expect(noMs.code).toBe(2);
    expect(noMs.stderr).toMatch(/latency needs milliseconds/);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/simulator refused: "stall" applies to streams/);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/unknown source "nope"/);
    expect(away.code).toBe(1);
    expect(away.stderr).toMatch(
      new RegExp(
        `cannot reach the simulator at http://127\\.0\\.0\\.1:${closedPort} \\(ECONNREFUSED\\); start it with \`npm run simulator\``,
      ),
    );
  });
});
