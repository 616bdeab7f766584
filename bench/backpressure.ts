/**
 * Backpressure benchmark: what a slow writer does to the fetchers and to memory.
 *
 *   npm run -s bench -- backpressure [--feeds F] [--entries E] [--summary CHARS] [--slowdown X]
 *                                    [--slow-seconds S] [--json]
 *
 * Three runs of the same workload (workers/stages/testing/backpressureScenario.ts: F local RSS
 * feeds of E entries with CHARS-long summaries, each polled once through the fetch stage into the
 * bounded write buffer, written by the real writeBatch):
 *
 *   1. unthrottled: the writer as it is;
 *   2. slow: the writer X× slower (default 100: after each batch, a pause of X − 1 times what the
 *      batch took), for the whole run unless --slow-seconds bounds it;
 *   3. control: an unbounded buffer and every feed fetched at once, the design the bound
 *      replaces, with the writer stalled until everything has been served (the pile-up at its
 *      worst, whatever the machine's speed), then writing at full speed.
 *
 * Printed for each: the most entries in flight at once (served and not yet written; the bound is
 * 8 fetch slots × E entries, whatever the writer's speed) and the feed bytes they stand for, live
 * memory peak above the start (V8 heap + buffers, sampled after a collection every 500 ms), the
 * most deliveries the buffer held, producer waits, drops, and whether every observation arrived.
 * The figures that matter: the slow run's entries in flight and memory next to the control's.
 * Embedded PGlite when DATABASE_URL is unset, else a scratch database on that server, dropped at
 * the end.
 */
import { parseArgs } from "node:util";
import { config } from "@/lib/config";
import { createScratchDatabase } from "@/lib/scratchDatabase";
import {
  type BackpressureResult,
  type BackpressureSettings,
  runBackpressure,
} from "@/workers/stages/testing/backpressureScenario";

const MB = 2 ** 20;
const log = (line: string) => process.stderr.write(`${line}\n`);

export async function run(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      feeds: { type: "string", default: "20" },
      entries: { type: "string", default: "30" },
      summary: { type: "string", default: "15000" },
      slowdown: { type: "string", default: "100" },
      "slow-seconds": { type: "string" },
      json: { type: "boolean", default: false },
    },
  });
  const number = (name: string, raw: string | undefined, min: number) => {
    const n = Number(raw);
    if (!Number.isFinite(n) || n < min) throw new Error(`--${name} must be a number ≥ ${min}`);
    return n;
  };
  const settings: BackpressureSettings = {
    feeds: number("feeds", values.feeds, 1),
    entries: number("entries", values.entries, 1),
    summaryChars: number("summary", values.summary, 0),
    slowdown: 1,
    bufferCapacity: 50,
    batchSize: 25,
    fetchConcurrency: 8,
    timeoutMs: 30 * 60_000,
  };
  const slowdown = number("slowdown", values.slowdown, 1);
  const slowFor = values["slow-seconds"];
  const scratch = await createScratchDatabase("ww_bench", config().DATABASE_URL, { poolSize: 10 });
  try {
    log(`database: ${scratch.db.kind} ${scratch.db.location}`);
    const runs: [string, BackpressureResult][] = [];
    log("unthrottled…");
    runs.push(["unthrottled", await runBackpressure(scratch.db, settings)]);
    log(`writer ${slowdown}× slower${slowFor ? ` for ${slowFor} s` : ""}…`);
    runs.push([
      `${slowdown}× slower`,
      await runBackpressure(scratch.db, {
        ...settings,
        slowdown,
        slowForMs: slowFor ? number("slow-seconds", slowFor, 0) * 1000 : undefined,
      }),
    ]);
    log("control: unbounded buffer…");
    runs.push([
      "control",
      await runBackpressure(scratch.db, {
        ...settings,
        stallUntilFull: true,
        bufferCapacity: 1_000_000,
        fetchConcurrency: settings.feeds,
      }),
    ]);
    const [fast, slow, control] = runs.map(([, r]) => r) as BackpressureResult[];
    if (!fast || !slow || !control) throw new Error("a run is missing");
    const summary = {
      observations: fast.expected,
      unthrottledPeakMB: round(fast.peakMemoryBytes / MB),
      slowPeakMB: round(slow.peakMemoryBytes / MB),
      differenceMB: round((slow.peakMemoryBytes - fast.peakMemoryBytes) / MB),
      controlPeakMB: round(peakOf(control) / MB),
      bound: settings.fetchConcurrency * settings.entries,
      slowPeakInFlight: slow.peakInFlight,
      controlPeakInFlight: control.peakInFlight,
      slowWaits: slow.waits,
      dropped: slow.dropped,
      allArrived: runs.every(([, r]) => r.observations === r.expected),
    };
    if (values.json) {
      console.log(JSON.stringify(summary));
      return;
    }
    console.log(
      `backpressure: ${settings.feeds} feeds × ${settings.entries} entries (${settings.summaryChars}-char summaries), ` +
        `buffer ${settings.bufferCapacity}, ${settings.fetchConcurrency} fetch slots\n`,
    );
    console.log(
      "run            peak MB  in flight (MB)  peak queued  waits  waited ms  dropped  arrived    took ms  writing ms",
    );
    for (const [name, r] of runs) {
      console.log(
        [
          name.padEnd(13),
          round(peakOf(r) / MB)
            .toFixed(1)
            .padStart(8),
          `${r.peakInFlight} (${round(r.peakInFlightBytes / MB).toFixed(1)})`.padStart(15),
          String(r.peakQueued).padStart(12),
          String(r.waits).padStart(6),
          String(r.waitedMs).padStart(10),
          String(r.dropped).padStart(8),
          `${r.observations}/${r.expected}`.padStart(10),
          String(r.durationMs).padStart(10),
          `${r.writeMs}+${r.throttledMs}`.padStart(11),
        ].join(" "),
      );
    }
    console.log(
      `\nentries in flight at once: slow ${slow.peakInFlight} of ${slow.expected} (bound ${summary.bound}), ` +
        `control ${control.peakInFlight}; live memory peak: slow − unthrottled ${summary.differenceMB} MB, ` +
        `control ${summary.controlPeakMB} MB`,
    );
  } finally {
    await scratch.dispose();
  }
}

const round = (n: number) => Math.round(n * 10) / 10;
// A stalled run's memory when full is measured at that moment too; the sampler may miss it.
const peakOf = (r: BackpressureResult) => Math.max(r.peakMemoryBytes, r.heldMemoryBytes ?? 0);
