import { once } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import type { Database } from "@/lib/db";
import { sleep } from "@/lib/sleep";
import { RateBudget } from "@/workers/fetcher/rateBudget";
import { startWorkers } from "@/workers/index";
import { type Delivery, writeBatch } from "@/workers/store";

/**
 * The backpressure scenario shared by its test and its benchmark: a local server serves `feeds`
 * RSS feeds of `entries` entries with long summaries; the workers poll each once through the
 * fetch stage into the write buffer; the store stage's writer is the real writeBatch, made
 * `slowdown`× slower (each batch is followed by a pause of (slowdown − 1)× its own duration).
 * What the pipeline holds at once, three ways:
 * - entries in flight: served by the feed server and not yet written (exact, counted at every
 *   change), and the feed bytes they stand for. A fetch job holds its feed until the writer has
 *   written it, so the bound is fetchConcurrency feeds, whatever the writer's speed;
 * - with `stallUntilFull`, the writer writes nothing until the pipeline is full (every feed
 *   served, or every fetch slot holding a feed and nothing more served for 1 s): the entries
 *   and live memory held at that moment are measured at a point that does not depend on the
 *   machine's speed (the worst case, an infinitely slow writer), then the writer runs;
 * - live memory (V8 heap + buffers, after a forced collection) sampled every 500 ms, the peak
 *   above the level at the start.
 */
export interface BackpressureSettings {
  feeds: number;
  entries: number;
  summaryChars: number;
  slowdown: number;
  bufferCapacity: number;
  batchSize: number;
  fetchConcurrency: number;
  /** The writer is slow for this long from the start, then recovers (default: the whole run). */
  slowForMs?: number;
  /** The writer writes nothing until the pipeline is full (see above). */
  stallUntilFull?: boolean;
  /** Give up after this long (the scenario failed). */
  timeoutMs?: number;
}

export interface BackpressureResult {
  slowdown: number;
  observations: number;
  expected: number;
  durationMs: number;
  peakMemoryBytes: number;
  /** With stallUntilFull: entries in flight and live memory above the start, once full. */
  heldEntries: number | null;
  heldMemoryBytes: number | null;
  /** The most entries served and not yet written at once, and the feed bytes they stand for. */
  peakInFlight: number;
  peakInFlightBytes: number;
  /** The whole workload's feed bytes (what an unbounded pipeline can end up holding). */
  workloadBytes: number;
  /** The most deliveries the buffer held at once (its capacity bounds it). */
  peakQueued: number;
  waits: number;
  waitedMs: number;
  dropped: number;
  /** Time the writer spent writing, and the pauses that made it slower. */
  writeMs: number;
  throttledMs: number;
}

function words(seed: number, chars: number): string {
  // Varied text (not one repeated character) so nothing along the way can share or compress it.
  const vocabulary = ["harbour", "strike", "ends", "markets", "rally", "council", "votes", "rain"];
  let x = seed || 1;
  let out = "";
  while (out.length < chars) {
    x = (x * 1103515245 + 12345) & 0x7fffffff;
    out += `${vocabulary[x % vocabulary.length]}${x % 997} `;
  }
  return out.slice(0, chars);
}

function feed(index: number, entries: number, summaryChars: number): string {
  const items = Array.from({ length: entries }, (_, i) => {
    const id = `bp-${index}-${i}`;
    return `<item><guid isPermaLink="false">${id}</guid><title>Story ${index}.${i}</title>
<link>https://news.example/${id}</link><pubDate>Mon, 30 Nov 2026 10:00:00 GMT</pubDate>
<description>${words(index * 100_000 + i, summaryChars)}</description></item>`;
  });
  return `<?xml version="1.0"?><rss version="2.0"><channel><title>Feed ${index}</title>
<link>https://news.example/</link><description>d</description>${items.join("")}</channel></rss>`;
}

async function serveFeeds(
  settings: BackpressureSettings,
  onServed: (sourceId: string, bytes: number) => void,
): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    const m = /^\/feed\/(\d+)\.xml$/.exec(req.url ?? "");
    if (!m) {
      res.writeHead(404).end();
      return;
    }
    const body = feed(Number(m[1]), settings.entries, settings.summaryChars);
    res.writeHead(200, { "content-type": "application/rss+xml" });
    res.end(body, () => onServed(`bp-${m[1]}`, Buffer.byteLength(body)));
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

let gc: (() => void) | null = null;
function collectGarbage() {
  if (!gc) {
    setFlagsFromString("--expose-gc");
    gc = runInNewContext("gc") as () => void;
  }
  gc();
}

const memoryNow = () => {
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
};

/** Runs the scenario on an empty ingestion schema of `db` (news, jobs and sources are cleared). */
export async function runBackpressure(
  db: Database,
  settings: BackpressureSettings,
): Promise<BackpressureResult> {
  await db.prisma.$executeRaw`
    TRUNCATE news, news_events, jobs, job_failures, lease_events, fetch_attempts,
             collector_status, source_state, sources CASCADE`;
  // Entries served and not yet written, and the feed bytes they stand for (a feed's bytes shared
  // evenly by its entries).
  const flight = { entries: 0, bytes: 0, peakEntries: 0, peakBytes: 0, workloadBytes: 0 };
  const bytesPerEntry = new Map<string, number>();
  let servedFeeds = 0;
  const { server, url } = await serveFeeds(settings, (sourceId, bytes) => {
    servedFeeds += 1;
    bytesPerEntry.set(sourceId, bytes / settings.entries);
    flight.workloadBytes += bytes;
    flight.entries += settings.entries;
    flight.bytes += bytes;
    flight.peakEntries = Math.max(flight.peakEntries, flight.entries);
    flight.peakBytes = Math.max(flight.peakBytes, flight.bytes);
  });
  try {
    await db.prisma.source.createMany({
      data: Array.from({ length: settings.feeds }, (_, i) => ({
        id: `bp-${i}`,
        name: `Feed ${i}`,
        kind: "feed",
        url: `${url}/feed/${i}.xml`,
        allowPrivate: true,
        pollIntervalSeconds: 86_400,
      })),
    });
    await db.prisma.sourceState.createMany({
      data: Array.from({ length: settings.feeds }, (_, i) => ({ sourceId: `bp-${i}` })),
    });
    const expected = settings.feeds * settings.entries;

    let writeMs = 0;
    let throttledMs = 0;
    let releaseWriter = () => {};
    const full = settings.stallUntilFull
      ? new Promise<void>((resolve) => {
          releaseWriter = resolve;
        })
      : null;
    const write = async (deliveries: Delivery[]) => {
      await full;
      const writeStarted = performance.now();
      const outcomes = await writeBatch(db, deliveries);
      for (const d of deliveries) {
        flight.entries -= 1;
        flight.bytes -= bytesPerEntry.get((d.input as { sourceId: string }).sourceId) ?? 0;
      }
      const took = performance.now() - writeStarted;
      writeMs += took;
      const slow = settings.slowForMs === undefined || Date.now() - runStarted < settings.slowForMs;
      if (settings.slowdown > 1 && slow) {
        throttledMs += took * (settings.slowdown - 1);
        await sleep(took * (settings.slowdown - 1));
      }
      return outcomes;
    };

    collectGarbage();
    const baseline = memoryNow();
    let peak = 0;
    let peakQueued = 0;
    let runStarted = Date.now();
    const workers = await startWorkers(db, {
      fetch: {
        robots: false,
        // Every feed is on one local host; the per-host politeness budget is not under test.
        deps: { rateBudget: new RateBudget({ ratePerSecond: 1e9, burst: 1e9 }) },
      },
      fetchConcurrency: settings.fetchConcurrency,
      buffer: { capacity: settings.bufferCapacity, batchSize: settings.batchSize, write },
      queue: { pollMs: 50 },
      sourcesRefreshMs: 3_600_000,
    });
    runStarted = Date.now();
    // Live memory, not garbage waiting for the collector: collected before each sample (the
    // peak of heapUsed alone mostly measures when the collector last ran).
    const sampler = setInterval(() => {
      collectGarbage();
      peak = Math.max(peak, memoryNow() - baseline);
    }, 500);
    const queueSampler = setInterval(() => {
      peakQueued = Math.max(peakQueued, workers.buffer().queued);
    }, 5);
    let held: { entries: number; memory: number } | null = null;
    let lastServed = -1;
    let quietSince = Date.now();
    const fullWatch = setInterval(() => {
      if (!full || held) return;
      if (servedFeeds !== lastServed) {
        lastServed = servedFeeds;
        quietSince = Date.now();
      }
      // Every fetch slot has had its feed and nothing more came for 1 s: the fetchers are all
      // waiting (on the full buffer, or on their own feed being written). 1 s is many times a
      // local fetch of one feed (~20 ms).
      const blocked =
        servedFeeds >= Math.min(settings.feeds, settings.fetchConcurrency) &&
        Date.now() - quietSince >= 1_000;
      if (servedFeeds < settings.feeds && !blocked) return;
      collectGarbage();
      held = { entries: flight.entries, memory: memoryNow() - baseline };
      releaseWriter();
    }, 50);
    let observations = 0;
    try {
      const deadline = Date.now() + (settings.timeoutMs ?? 600_000);
      while (Date.now() < deadline) {
        observations = await db.prisma.newsEvent.count();
        const polled = await db.prisma.job.count({
          where: {
            queue: "fetch",
            state: "ready",
            runAt: { gt: new Date(Date.now() + 3_600_000) },
          },
        });
        if (observations >= expected && polled === settings.feeds) break;
        await sleep(100);
      }
    } finally {
      clearInterval(sampler);
      clearInterval(queueSampler);
      clearInterval(fullWatch);
      releaseWriter();
      await workers.stop();
    }
    const stats = workers.buffer();
    return {
      slowdown: settings.slowdown,
      observations,
      expected,
      durationMs: Date.now() - runStarted,
      peakMemoryBytes: peak,
      heldEntries: (held as { entries: number } | null)?.entries ?? null,
      heldMemoryBytes: (held as { memory: number } | null)?.memory ?? null,
      peakInFlight: flight.peakEntries,
      peakInFlightBytes: Math.round(flight.peakBytes),
      workloadBytes: flight.workloadBytes,
      peakQueued,
      waits: stats.waits,
      waitedMs: stats.waitedMs,
      dropped: stats.dropped,
      writeMs: Math.round(writeMs),
      throttledMs: Math.round(throttledMs),
    };
  } finally {
    server.close();
  }
}
