import { spawn } from "node:child_process";
import { readFile } from "node:fs/promises";
import { request } from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";

// `npx tsx simulator/fleet/probe.ts --sources 100000 --rate 300 --seconds 30`: starts the
// simulator with a fleet in a child process, then polls rate × seconds of its feeds (shuffled)
// twice as a collector would: once unconditionally (first sight), once with the ETags it got.
// Prints what the simulator process spent per round: CPU per request, RSS and heap. The load
// runs in this process, so the figures are the simulator's alone.

const { values } = parseArgs({
  options: {
    sources: { type: "string", default: "10000" },
    rate: { type: "string", default: "200" },
    seconds: { type: "string", default: "20" },
    concurrency: { type: "string", default: "200" },
  },
});
const size = Number(values.sources);
const rate = Number(values.rate);
const seconds = Number(values.seconds);
const concurrency = Number(values.concurrency);
const file = path.join(tmpdir(), `fleet-probe-${process.pid}.json`);

const child = spawn(
  process.execPath,
  [
    "--import",
    "tsx",
    "simulator/main.ts",
    "--port",
    "0",
    "--sources",
    String(size),
    "--write-sources",
    file,
  ],
  { cwd: path.resolve(import.meta.dirname, "../.."), stdio: ["ignore", "pipe", "inherit"] },
);
let out = "";
child.stdout.setEncoding("utf8").on("data", (c: string) => {
  out += c;
});
while (!/fleet: wrote/.test(out)) await new Promise((r) => setTimeout(r, 50));
const control = /newsroom simulator on (http:\/\/[^\s]+)/.exec(out)?.[1] as string;
const urls = (
  JSON.parse(await readFile(file, "utf8")) as { sources: { url: string }[] }
).sources.map((s) => s.url);
for (let i = urls.length - 1; i > 0; i--) {
  const j = Math.floor(Math.random() * (i + 1));
  [urls[i], urls[j]] = [urls[j] as string, urls[i] as string];
}
const fleetState = async (): Promise<Record<string, unknown>> =>
  ((await (await fetch(`${control}/_control/fleet`)).json()) as { fleet: Record<string, unknown> })
    .fleet;

const etags = new Map<string, string>();
const poll = (url: string) =>
  new Promise<string>((resolve) => {
    const etag = etags.get(url);
    const req = request(
      url,
      { agent: false, timeout: 10_000, headers: etag ? { "if-none-match": etag } : {} },
      (res) => {
        if (res.headers.etag) etags.set(url, res.headers.etag);
        res.resume().on("end", () => resolve(String(res.statusCode)));
      },
    );
    req.on("timeout", () => req.destroy());
    req.on("error", () => resolve("error"));
    req.end();
  });

type State = {
  hosts: number;
  requests: number;
  answers: Record<string, number>;
  process: { cpuMs: number; rssMb: number; heapUsedMb: number };
};
const state = async () => (await fleetState()) as unknown as State;

/** Polls `feeds` once each at `rate` a second; returns what the simulator spent on it. */
async function round(feeds: string[], label: string) {
  const before = await state();
  const started = Date.now();
  const seen: Record<string, number> = {};
  let next = 0;
  let inFlight = 0;
  await new Promise<void>((done) => {
    const tick = setInterval(() => {
      const due = Math.min(feeds.length, Math.floor(((Date.now() - started) / 1000) * rate)) - next;
      for (let n = 0; n < due && inFlight < concurrency; n++) {
        inFlight += 1;
        void poll(feeds[next++] as string).then((status) => {
          seen[status] = (seen[status] ?? 0) + 1;
          inFlight -= 1;
        });
      }
      if (next >= feeds.length && inFlight === 0) {
        clearInterval(tick);
        done();
      }
    }, 10);
  });
  const after = await state();
  const elapsed = (Date.now() - started) / 1000;
  const cpu = after.process.cpuMs - before.process.cpuMs;
  return {
    round: label,
    requests: after.requests - before.requests,
    seconds: Number(elapsed.toFixed(1)),
    perSecond: Math.round((after.requests - before.requests) / elapsed),
    answers: Object.fromEntries(
      Object.entries(after.answers).map(([k, v]) => [k, v - (before.answers[k] ?? 0)]),
    ),
    clientSaw: seen,
    simulatorCpuShare: Number((cpu / (elapsed * 1000)).toFixed(3)),
    simulatorCpuMsPerRequest: Number(
      (cpu / Math.max(1, after.requests - before.requests)).toFixed(3),
    ),
    simulatorRssMb: after.process.rssMb,
    simulatorHeapUsedMb: after.process.heapUsedMb,
  };
}

const idle = await state();
const feeds = urls.slice(0, Math.min(urls.length, Math.round(rate * seconds)));
const first = await round(feeds, "first sight (unconditional)");
const again = await round(feeds, "again (conditional where validators were sent)");
console.log(
  JSON.stringify(
    {
      sources: size,
      hosts: idle.hosts,
      feedsPolled: feeds.length,
      idle: { rssMb: idle.process.rssMb, heapUsedMb: idle.process.heapUsedMb },
      rounds: [first, again],
    },
    null,
    2,
  ),
);
child.kill("SIGTERM");
