/**
 * Story webhooks benchmark: how fast wirewatch takes signed story webhooks and applies them, and
 * how far that is from the least a receiver could do.
 *
 *   npm run -s bench -- stories [--events N] [--concurrency C] [--json]
 *
 * Runs in a scratch database on DATABASE_URL's server (dropped at the end), or in a temporary
 * PGlite without one (then every figure is one connection's). N events (default 5,000) from a
 * seeded story desk, each delivered once as a signed webhook.
 *
 *   1. receipt: receiveWebhook (verify the signature, validate, record the event id and its job in
 *      one statement) with C deliveries at once (default 8): webhooks/s and the per-delivery
 *      p50/p99. Baseline: the same N events through the least an idempotent receiver must do,
 *      one INSERT … ON CONFLICT DO NOTHING of the event id per delivery, C at once, no signature.
 *   2. apply: the story stage (the real queue worker, C handlers) draining the N recorded events
 *      into the copy: events/s from first claim to last completion. Baseline: the same events'
 *      writes (applyStoryEvent) called directly, C at once, no queue.
 *
 * stdout: the figures and ratios (with --json one line: receiptPerSec, receiptBaselinePerSec,
 * receiptRatio, receiptP50Ms, receiptP99Ms, applyPerSec, applyBaselinePerSec, applyRatio).
 */
import { parseArgs } from "node:util";
import pLimit from "p-limit";
import type { Database } from "@/lib/db";
import { createScratchDatabase } from "@/lib/scratchDatabase";
import { Random } from "@/simulator/random";
import { StoryDesk } from "@/simulator/stories/desk";
import { startQueueWorker } from "@/workers/queue/queueWorker";
import { storyStage } from "@/workers/stages/storyStage";
import type { StoryApi } from "@/workers/stories/api";
import { applyStoryEvent } from "@/workers/stories/apply";
import type { Story, StoryEvent } from "@/workers/stories/events";
import { STORY_QUEUE } from "@/workers/stories/queue";
import { receiveWebhook } from "@/workers/stories/receiveWebhook";
import { loadStorySource } from "@/workers/stories/source";
import { SECRET_A, signedDelivery } from "@/workers/stories/testing/signing";

const log = (message: string) => console.error(`[stories] ${message}`);

export async function run(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      events: { type: "string", default: "5000" },
      concurrency: { type: "string", default: "8" },
      json: { type: "boolean", default: false },
    },
    strict: true,
  });
  const events = Number(values.events);
  const concurrency = Number(values.concurrency);
  for (const [name, n] of [
    ["events", events],
    ["concurrency", concurrency],
  ] as const) {
    if (!Number.isInteger(n) || n < 1) {
      const err = new Error(`--${name} must be a positive integer`);
      err.name = "UsageError";
      throw err;
    }
  }
  const scratch = await createScratchDatabase("ww_bench_stories", process.env.DATABASE_URL, {
    poolSize: concurrency + 4,
  });
  try {
    const result = await measure(scratch.db, events, concurrency);
    if (values.json) console.log(JSON.stringify(result));
    else {
      console.log(
        [
          `story webhooks, ${events} events, ${concurrency} at once (${scratch.db.kind})`,
          `receipt   ${result.receiptPerSec} webhooks/s (p50 ${result.receiptP50Ms} ms, p99 ${result.receiptP99Ms} ms)` +
            `  vs bare idempotent insert ${result.receiptBaselinePerSec}/s  → ${result.receiptRatio}×`,
          `apply     ${result.applyPerSec} events/s through the story queue` +
            `  vs the writes called directly ${result.applyBaselinePerSec}/s  → ${result.applyRatio}×`,
        ].join("\n"),
      );
    }
  } finally {
    await scratch.dispose();
  }
}

async function measure(db: Database, n: number, concurrency: number) {
  const desk = new StoryDesk({
    random: new Random(1),
    clock: Date.now,
    tickers: ["ACME", "GLOBX"],
  });
  await db.prisma.source.create({
    data: {
      id: "bench",
      name: "Bench desk",
      kind: "story-api",
      url: "http://bench.invalid/",
      tickers: ["ACME", "GLOBX"],
      webhookSecrets: [SECRET_A],
    },
  });
  await loadStorySource(db, "bench");
  const list: StoryEvent[] = [];
  while (list.length < n) list.push(...(desk.step() as StoryEvent[]));
  list.length = n;
  const deliveries = list.map((e) => signedDelivery(e, [SECRET_A]));
  const limit = pLimit(concurrency);

  log("receipt…");
  const times: number[] = [];
  let started = performance.now();
  await Promise.all(
    deliveries.map((d) =>
      limit(async () => {
        const t = performance.now();
        const answer = await receiveWebhook(db, { sourceId: "bench", ...d });
        if (answer.status !== 200) throw new Error(`webhook refused: ${answer.body.message}`);
        times.push(performance.now() - t);
      }),
    ),
  );
  const receiptSeconds = (performance.now() - started) / 1000;

  log("receipt baseline…");
  await db.prisma.$executeRawUnsafe("CREATE TABLE bare_events (id text PRIMARY KEY)");
  started = performance.now();
  await Promise.all(
    list.map((e) =>
      limit(
        () =>
          db.prisma
            .$executeRaw`INSERT INTO bare_events (id) VALUES (${e.id}) ON CONFLICT DO NOTHING`,
      ),
    ),
  );
  const baselineSeconds = (performance.now() - started) / 1000;

  log("apply through the story queue…");
  const api: StoryApi = {
    getStory: async (id) => desk.story(id) as Story | null,
    listStories: async (t) => desk.list(t) as Story[],
    listEvents: async () => ({ data: [], next_cursor: "end", has_more: false }),
  };
  const send = async () => {};
  started = performance.now();
  const worker = await startQueueWorker(db, {
    pollMs: 50,
    queues: { [STORY_QUEUE]: storyStage(db, { api: () => api, send, concurrency }) },
  });
  for (;;) {
    const left = await db.prisma.job.count({
      where: { queue: STORY_QUEUE, state: { in: ["ready", "leased"] } },
    });
    if (left === 0) break;
    await new Promise((r) => setTimeout(r, 20));
  }
  const applySeconds = (performance.now() - started) / 1000;
  await worker.stop(5_000);

  log("apply baseline…");
  await db.prisma.$executeRaw`DELETE FROM stories`;
  await db.prisma.$executeRaw`DELETE FROM claimed`;
  const source = await loadStorySource(db, "bench");
  if (!source) throw new Error("bench source vanished");
  started = performance.now();
  await Promise.all(list.map((e) => limit(() => applyStoryEvent({ db, source, api, send }, e))));
  const applyBaselineSeconds = (performance.now() - started) / 1000;

  times.sort((a, b) => a - b);
  const pct = (p: number) =>
    Math.round((times[Math.min(times.length - 1, Math.floor(p * times.length))] ?? 0) * 10) / 10;
  const rate = (s: number) => Math.round(n / s);
  const ratio = (a: number, b: number) => Math.round((a / b) * 100) / 100;
  return {
    receiptPerSec: rate(receiptSeconds),
    receiptBaselinePerSec: rate(baselineSeconds),
    receiptRatio: ratio(rate(receiptSeconds), rate(baselineSeconds)),
    receiptP50Ms: pct(0.5),
    receiptP99Ms: pct(0.99),
    applyPerSec: rate(applySeconds),
    applyBaselinePerSec: rate(applyBaselineSeconds),
    applyRatio: ratio(rate(applySeconds), rate(applyBaselineSeconds)),
  };
}
