/**
 * `npm run -s bench -- websub [--rounds 10] [--poll-seconds 5] [--json]`: latency from an
 * outlet's publication to the store, pushed by WebSub against polled, measured side by side in
 * one run on the simulator in real time and an in-memory PGlite.
 *
 * Each round publishes one story at a WebSub-subscribed feed (harbour-rss: the hub pushes it to
 * the real callback route, which parses and writes it) and one at a polled feed (meridian-rss:
 * refreshFeed every --poll-seconds, as the fetch stage would), at random moments so the polls'
 * phase is sampled evenly. A story's latency is its news row's first_seen_at (stamped as the
 * document is parsed, just before the write) minus the moment it was published.
 *
 * A poll's latency is the wait for the next poll plus the poll itself, so it grows with the
 * interval: the figures at the simulator's 30 s and the 300 s default are the measured poll cost
 * plus half an interval (the mean wait), labelled as derived. A push does not depend on it.
 * JSON (--json): { rounds, pollSeconds, push: {p50Ms, meanMs, maxMs}, poll: {…, waitMeanMs,
 * workMeanMs}, derivedPollMeanMs: {"30": …, "300": …} }.
 */
import { parseArgs } from "node:util";
import { type Database, openDatabase } from "@/lib/db";
import { startSimulator } from "@/simulator/server";
import { toSourceRef } from "@/workers/collectors/sourceRef";
import type { FetchSourceOptions } from "@/workers/fetcher";
import { OutageWatch } from "@/workers/fetcher/outage";
import { RateBudget } from "@/workers/fetcher/rateBudget";
import { refreshFeed } from "@/workers/refreshFeed";
import { maintainSubscriptions } from "@/workers/websub/maintain";
import { startCallbackServer } from "@/workers/websub/testing/callbackServer";

const log = (message: string) => console.error(`[websub] ${message}`);
const PUSHED = "harbour-rss";
const POLLED = "meridian-rss";

export async function run(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      rounds: { type: "string", default: "10" },
      "poll-seconds": { type: "string", default: "5" },
      json: { type: "boolean", default: false },
    },
    strict: true,
  });
  const rounds = Number(values.rounds);
  const pollSeconds = Number(values["poll-seconds"]);
  if (!Number.isInteger(rounds) || rounds < 1) usage("--rounds must be a positive integer");
  if (!(pollSeconds >= 1 && pollSeconds <= 120)) usage("--poll-seconds must be 1 to 120");

  const db = await openDatabase({ dataDir: "memory://" });
  (globalThis as unknown as { wirewatchDb?: Promise<Database> }).wirewatchDb = Promise.resolve(db);
  const sim = await startSimulator({ websubHub: true, ratePerMinute: 0, burstEveryMs: 0 });
  const callback = await startCallbackServer();
  let polling: NodeJS.Timeout | undefined;
  try {
    const source = async (id: string) => {
      const s = sim.sources().find((x) => x.id === id);
      if (!s) throw new Error(`the simulator has no ${id}`);
      return db.prisma.source.create({
        data: {
          id,
          name: s.name,
          kind: "feed",
          url: s.url,
          allowPrivate: true,
          pollIntervalSeconds: pollSeconds,
        },
      });
    };
    await source(PUSHED);
    await maintainSubscriptions(db, { callbackBase: callback.url, leaseSeconds: 3600 });
    await sim.websub?.settled();
    const sub = await db.prisma.websubSubscription.findUniqueOrThrow({
      where: { sourceId: PUSHED },
    });
    if (sub.state !== "active") throw new Error(`subscription ${sub.state}: ${sub.lastError}`);
    log(`subscribed ${PUSHED} at ${sub.hub}`);
    // Added after the round of upkeep, so it stays polled only.
    const polled = toSourceRef(await source(POLLED));
    if (!polled) throw new Error("no URL");

    // The polled feed: one refreshFeed every pollSeconds, starting at a random phase.
    const pollStarts: number[] = [];
    let bodyHash: string | null = null;
    const fetchOptions: FetchSourceOptions = {
      robots: false,
      deps: {
        rateBudget: new RateBudget({ ratePerSecond: 1_000, burst: 1_000 }),
        outage: new OutageWatch(),
      },
    };
    await refreshFeed(db, polled, "A", null, fetchOptions).then((o) => {
      bodyHash = o.bodyHash;
    });
    const poll = async () => {
      pollStarts.push(Date.now());
      const outcome = await refreshFeed(db, polled, "A", bodyHash, fetchOptions);
      bodyHash = outcome.bodyHash;
    };
    const schedule = () => {
      polling = setTimeout(() => void poll().finally(schedule), pollSeconds * 1000);
    };
    schedule();

    const published: { round: number; at: number }[] = [];
    for (let round = 1; round <= rounds; round++) {
      await new Promise((r) => setTimeout(r, 300 + Math.random() * pollSeconds * 1000));
      const at = Date.now();
      sim.control.publish({ outlet: "harbour", title: `Bench pushed ${round}` });
      sim.control.publish({ outlet: "meridian", title: `Bench polled ${round}` });
      published.push({ round, at });
      log(`round ${round}/${rounds}`);
    }
    await new Promise((r) => setTimeout(r, pollSeconds * 1000 + 2_000));
    clearTimeout(polling);
    await sim.websub?.settled();

    const seen = async (title: string) =>
      (
        await db.prisma.news.findFirst({ where: { title }, select: { firstSeenAt: true } })
      )?.firstSeenAt.getTime() ?? null;
    const push: number[] = [];
    const pollLatency: number[] = [];
    const waits: number[] = [];
    for (const { round, at } of published) {
      const pushedAt = await seen(`Bench pushed ${round}`);
      const polledAt = await seen(`Bench polled ${round}`);
      if (pushedAt === null || polledAt === null) throw new Error(`round ${round} was not stored`);
      push.push(pushedAt - at);
      pollLatency.push(polledAt - at);
      const next = pollStarts.find((t) => t >= at);
      if (next !== undefined) waits.push(next - at);
    }
    const work = mean(pollLatency) - mean(waits);
    const result = {
      rounds,
      pollSeconds,
      push: summary(push),
      poll: {
        ...summary(pollLatency),
        waitMeanMs: Math.round(mean(waits)),
        workMeanMs: Math.round(work),
      },
      derivedPollMeanMs: { "30": Math.round(15_000 + work), "300": Math.round(150_000 + work) },
      hub: sim.websub?.stats,
    };
    if (values.json) console.log(JSON.stringify(result));
    else {
      console.log(
        [
          `publication → store, ${rounds} rounds (pglite in memory, simulator in real time)`,
          `WebSub push    p50 ${result.push.p50Ms} ms  mean ${result.push.meanMs} ms  max ${result.push.maxMs} ms  (hub looks every 100 ms)`,
          `poll every ${pollSeconds} s  p50 ${result.poll.p50Ms} ms  mean ${result.poll.meanMs} ms  max ${result.poll.maxMs} ms  (wait ${result.poll.waitMeanMs} ms + poll ${result.poll.workMeanMs} ms)`,
          `poll, derived  mean at 30 s ≈ ${(result.derivedPollMeanMs["30"] / 1000).toFixed(1)} s, at 300 s ≈ ${(result.derivedPollMeanMs["300"] / 1000).toFixed(1)} s  → push ${Math.round(result.derivedPollMeanMs["30"] / Math.max(1, result.push.meanMs))}× / ${Math.round(result.derivedPollMeanMs["300"] / Math.max(1, result.push.meanMs))}× faster`,
        ].join("\n"),
      );
    }
  } finally {
    clearTimeout(polling);
    await callback.close();
    await sim.stop();
    await db.close();
  }
}

function summary(ms: number[]) {
  const sorted = [...ms].sort((a, b) => a - b);
  return {
    p50Ms: Math.round(sorted[Math.floor((sorted.length - 1) / 2)] ?? 0),
    meanMs: Math.round(mean(ms)),
    maxMs: Math.round(sorted[sorted.length - 1] ?? 0),
  };
}

function mean(values: number[]): number {
  return values.length ? values.reduce((a, b) => a + b, 0) / values.length : 0;
}

function usage(message: string): never {
  const err = new Error(message);
  err.name = "UsageError";
  throw err;
}
