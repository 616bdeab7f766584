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
  it("drives the story API: changes, cursor expiry, webhook faults, stale reads", async () => {
    const before = sim.control.stories.desk.snapshot().seq;
    const step = await cli("stories", "step", "3", "--url", sim.url, "--json");
    expect(step.code).toBe(0);
    expect(JSON.parse(step.stdout).events.length).toBeGreaterThanOrEqual(3);
    expect(sim.control.stories.desk.snapshot().seq).toBeGreaterThanOrEqual(before + 3);

    const cursor = (await (await fetch(`${sim.url}/stories-api/v1/events?limit=1`)).json())
      .next_cursor;
    expect((await cli("stories", "expire-cursors", "--url", sim.url)).code).toBe(0);
    const expired = await fetch(
      `${sim.url}/stories-api/v1/events?cursor=${encodeURIComponent(cursor)}`,
    );
    expect(expired.status).toBe(410);

    expect(await cli("stories", "drop", "0.5", "--url", sim.url)).toMatchObject({ code: 0 });
    expect(sim.control.stories.sender.faults()).toMatchObject({ global: { drop: { share: 0.5 } } });
    expect(await cli("stories", "clear-faults", "--url", sim.url)).toMatchObject({ code: 0 });
    const bad = await cli("stories", "drop", "2", "--url", sim.url);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/share is from 0 to 1/);

    expect(await cli("fault", "story-desk", "stale-reads", "200", "--url", sim.url)).toMatchObject({
      code: 0,
      stdout: "story-desk: stale-reads 200 ms\n",
    });
    expect((await cli("clear", "story-desk", "--url", sim.url)).code).toBe(0);
  });

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

  it("prints the truth: counts by kind, or every item with --json", async () => {
    const [human, json, extra] = await Promise.all([
      cli("truth", "--url", sim.url),
      cli("truth", "--url", sim.url, "--json"),
      cli("truth", "now", "--url", sim.url),
    ]);
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(/^\d+ items, \d+ stories told more than once: original \d+/);
    const body = JSON.parse(json.stdout);
    expect(body.items.length).toBe(body.counts.items);
    expect(body.items[0]).toMatchObject({
      sourceId: expect.any(String),
      storyId: expect.any(String),
    });
    expect(extra.code).toBe(2);
    expect(extra.stderr).toMatch(/sim truth takes no arguments/);
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
