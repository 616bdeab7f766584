import { randomBytes } from "node:crypto";
import { isDeepStrictEqual } from "node:util";
import pLimit from "p-limit";
import type { Database } from "@/lib/db";
import { Random } from "@/simulator/random";
import {
  CursorExpiredError as DeskCursorExpired,
  type DeskEvent,
  StoryDesk,
} from "@/simulator/stories/desk";
import { dropQueue } from "@/workers/queue/dropQueue";
import { startQueueWorker } from "@/workers/queue/queueWorker";
import { type StoryStageOptions, storyStage } from "@/workers/stages/storyStage";
import { CursorExpiredError, type StoryApi } from "../api";
import { catchUp } from "../catchUp";
import type { Story } from "../events";
import type { Sender } from "../notify";
import { receiveWebhook } from "../receiveWebhook";
import { loadStorySource } from "../source";
import { SECRET_A, signedDelivery } from "../testing/signing";

/**
 * Randomized chaos runs of the story-API copy against a real database (the acceptance check of
 * seed 001): a generated history of creates, updates, strong, closes, merge chains and
 * shortlisted articles, delivered as signed webhooks late, twice, out of order and lost, through
 * the real receipt (verify, record, queue) and the real story stage with 8 handlers at once,
 * mixed with slow and stale API reads, catch-ups, a ticker added mid-stream and a cursor expiry
 * that forces a reload while webhooks keep arriving; now and then the process "dies" between
 * claiming a notification and sending it. At the end of every run the copy must equal the API.
 */

export interface ChaosOptions {
  runs: number;
  seed: number;
  /** Handlers at once, for webhook receipts and for applying events (default 8). */
  concurrency?: number;
  /** Told after each run (progress). */
  onRun?: (run: RunReport) => void;
}

export interface RunReport {
  run: number;
  /** Replays this run alone: `chaos stories --runs 1 --seed <seed>`. */
  seed: number;
  source: string;
  mode: "snapshot" | "fetch";
  events: number;
  problems: string[];
  duplicateNotifications: number;
  resurrections: number;
  reloads: number;
}

export interface ChaosReport {
  runs: number;
  /** Runs whose copy did not end equal to the API (or whose notifications were wrong). */
  mismatches: number;
  duplicateNotifications: number;
  resurrections: number;
  seed: number;
  failed: RunReport[];
}

const TICKERS = ["ACME", "GLOBX", "INITECH"] as const;

export async function runStoryChaos(db: Database, options: ChaosOptions): Promise<ChaosReport> {
  const concurrency = options.concurrency ?? 8;
  const session = randomBytes(4).toString("hex");
  const queue = `chaos-story-${session}`;
  // Each run's source id → how its handlers reach its API and count its notifications.
  const runs = new Map<string, { api: StoryApi; send: Sender }>();
  const stage: StoryStageOptions = {
    concurrency,
    graceSeconds: 0,
    api: (source) => mustGet(runs, source.id).api,
    send: async (d, n) => mustGet(runs, n.sourceId).send(d, n),
  };
  const worker = await startQueueWorker(db, {
    workerId: `chaos:${session}`,
    pollMs: 50,
    sweepMs: 1_000,
    queues: { [queue]: storyStage(db, stage) },
  });
  const report: ChaosReport = {
    runs: 0,
    mismatches: 0,
    duplicateNotifications: 0,
    resurrections: 0,
    seed: options.seed,
    failed: [],
  };
  try {
    for (let i = 0; i < options.runs; i++) {
      const run = await oneRun(db, {
        run: i,
        seed: options.seed + i,
        session,
        queue,
        concurrency,
        register: (id, deps) => runs.set(id, deps),
      });
      runs.delete(run.source);
      report.runs++;
      report.duplicateNotifications += run.duplicateNotifications;
      report.resurrections += run.resurrections;
      if (run.problems.length > 0) {
        report.mismatches++;
        report.failed.push(run);
      }
      options.onRun?.(run);
    }
  } finally {
    await worker.stop(5_000);
    await dropQueue(db, queue);
  }
  return report;
}

interface RunContext {
  run: number;
  seed: number;
  session: string;
  queue: string;
  concurrency: number;
  register(sourceId: string, deps: { api: StoryApi; send: Sender }): void;
}

async function oneRun(db: Database, ctx: RunContext): Promise<RunReport> {
  // Two streams: the history (and when things happen) from one, so a seed always replays the same
  // history; the faults, drawn in whatever order the racing handlers reach them, from the other.
  const random = new Random(ctx.seed);
  const faults = new Random(ctx.seed ^ 0x5bd1e995);
  const sourceId = `chaos-${ctx.session}-${ctx.seed}`;
  const mode = random.chance(0.5) ? "snapshot" : "fetch";
  const desk = new StoryDesk({
    random,
    clock: Date.now,
    idPrefix: `${ctx.session}-${ctx.seed}-`,
    tickers: TICKERS,
  });
  const problems: string[] = [];
  // When each story became strong, by its event's publication (what the consumer judges by).
  const strongAt = new Map<string, number>();
  desk.onEvent((e) => {
    if (e.type === "story.became_strong") strongAt.set(e.data.story.id, Date.parse(e.created_at));
  });

  // Slow and stale reads: a read takes its answer at the start and gives it after a delay,
  // so changes made meanwhile are missing from it (a read that started before a change).
  const staleShare = random.next() * 0.6;
  const later = async <T>(read: () => T): Promise<T> => {
    if (!faults.chance(staleShare)) return read();
    if (faults.chance(0.3)) {
      // Slow but fresh: the answer is read when it is sent.
      await sleep(faults.int(1, 15));
      return read();
    }
    const answer = read();
    await sleep(faults.int(1, 15));
    return answer;
  };
  // Set mid-stream; the cursors expire just before the next listing that holds one (a listing
  // from the start of the window would not notice), so every run's catch-up meets a 410 and
  // reloads while webhooks and changes go on.
  let expireCursors = false;
  const api: StoryApi = {
    getStory: (id) => later(() => desk.story(id) as Story | null),
    listStories: (ticker) => later(() => desk.list(ticker) as Story[]),
    listEvents: async (cursor, tickers) => {
      if (expireCursors && cursor !== null) {
        expireCursors = false;
        desk.expireCursors();
      }
      try {
        return await later(() => desk.events({ cursor, tickers, limit: faults.int(3, 12) }));
      } catch (err) {
        if (err instanceof DeskCursorExpired) throw new CursorExpiredError(err.message);
        throw err;
      }
    },
  };
  // Notifications sent, per story; a "crash" between claim and send loses that one.
  const sent = new Map<string, number>();
  const crashed = new Set<string>();
  const crashShare = random.chance(0.3) ? 0.2 : 0;
  const send: Sender = async (_db, n) => {
    if (faults.chance(crashShare)) {
      crashed.add(n.story.id);
      throw new Error("chaos: the process died between claim and send");
    }
    sent.set(n.story.id, (sent.get(n.story.id) ?? 0) + 1);
  };
  ctx.register(sourceId, { api, send });

  // History before the subscription: the copy must learn it from the load and the catch-up.
  for (let i = random.int(0, 12); i > 0; i--) desk.step(random);

  const initial = TICKERS.slice(0, 2);
  const added = TICKERS[2];
  await db.prisma.source.create({
    data: {
      id: sourceId,
      name: `chaos run ${ctx.seed}`,
      kind: "story-api",
      url: "http://chaos.invalid/",
      tickers: [...initial],
      storyMode: mode,
      webhookSecrets: [SECRET_A],
      enabled: true,
    },
  });
  await loadStorySource(db, sourceId); // the subscription starts now

  // Webhooks: every event is delivered, late (reordered), sometimes twice; a few are lost and
  // only the catch-up brings them. 5xx answers are retried, as a sender does.
  const deliveries: Promise<void>[] = [];
  const handlers = pLimit(ctx.concurrency);
  const lateShare = random.next();
  const twiceShare = random.next() * 0.4;
  const lostShare = random.chance(0.5) ? random.next() * 0.15 : 0;
  const deliver = (event: DeskEvent) => {
    if (faults.chance(lostShare)) return;
    const copies = faults.chance(twiceShare) ? 2 : 1;
    for (let c = 0; c < copies; c++) {
      const delay = faults.chance(lateShare) ? faults.int(1, 40) : 0;
      deliveries.push(
        sleep(delay).then(() =>
          handlers(async () => {
            for (let attempt = 1; ; attempt++) {
              const answer = await receiveWebhook(
                db,
                { sourceId, ...signedDelivery(event, [SECRET_A]) },
                { queue: ctx.queue },
              );
              if (answer.status < 500) {
                if (answer.status !== 200)
                  problems.push(`webhook ${event.id} refused: ${answer.body.message}`);
                return;
              }
              if (attempt >= 10)
                return void problems.push(`webhook ${event.id} not recorded after 10 tries`);
              await sleep(20 * attempt);
            }
          }),
        ),
      );
    }
  };
  desk.onEvent(deliver);

  // Catch-ups run one at a time (as the queue makes them), between and during the changes.
  let catchUps = Promise.resolve();
  let reloads = 0;
  const runCatchUp = () => {
    catchUps = catchUps.then(async () => {
      const source = await loadStorySource(db, sourceId);
      if (!source) throw new Error(`chaos source ${sourceId} vanished`);
      const result = await catchUp({ db, source, api, send }, { graceSeconds: 0 });
      reloads += result.reloads;
    });
    return catchUps;
  };

  const steps = random.int(15, 60);
  const addAt = random.int(0, steps - 1);
  const expireAt = random.int(0, steps - 1);
  void runCatchUp();
  for (let i = 0; i < steps; i++) {
    if (i === addAt) {
      await db.prisma.source.update({
        where: { id: sourceId },
        data: { tickers: [...initial, added] },
      });
    }
    if (i === expireAt) {
      expireCursors = true;
      void runCatchUp();
    } else if (random.chance(0.08)) void runCatchUp();
    desk.step(random);
    if (random.chance(0.3)) await sleep(random.int(0, 3));
  }

  // Let everything land: webhooks (and their retries), the handlers, then a last catch-up
  // (the safety net that finds lost webhooks), then what it woke.
  await Promise.all(deliveries);
  await runCatchUp().catch((err) => problems.push(`catch-up failed: ${(err as Error).message}`));
  await runCatchUp().catch((err) => problems.push(`catch-up failed: ${(err as Error).message}`));
  await drained(db, ctx.queue, sourceId, problems);

  const verdict = await compare(db, sourceId, desk, strongAt, sent, crashed, problems);
  if (problems.length === 0) await db.prisma.source.delete({ where: { id: sourceId } });
  return {
    run: ctx.run,
    seed: ctx.seed,
    source: sourceId,
    mode,
    events: desk.snapshot().seq,
    problems,
    reloads,
    ...verdict,
  };
}

/** Waits until the run's queued events are applied; dead letters are problems. */
async function drained(db: Database, queue: string, sourceId: string, problems: string[]) {
  for (let waited = 0; ; waited += 25) {
    const [row] = await db.prisma.$queryRaw<{ live: number; dead: number }[]>`
      SELECT count(*) FILTER (WHERE state IN ('ready', 'leased'))::int AS live,
             count(*) FILTER (WHERE state = 'dead')::int AS dead
      FROM jobs WHERE queue = ${queue} AND source_id = ${sourceId}`;
    if (row && row.dead > 0) problems.push(`${row.dead} events dead-lettered`);
    if (!row || row.live === 0) return;
    if (waited > 60_000) return void problems.push(`${row.live} events still queued after 60 s`);
    await sleep(25);
  }
}

/** The copy against the API's state, and the notifications against who became strong when. */
async function compare(
  db: Database,
  sourceId: string,
  desk: StoryDesk,
  strong: Map<string, number>,
  sent: Map<string, number>,
  crashed: Set<string>,
  problems: string[],
): Promise<{ duplicateNotifications: number; resurrections: number }> {
  const truth = desk.snapshot();
  const rows = await db.prisma.story.findMany({ where: { sourceId } });
  const copy = new Map(rows.map((r) => [r.id, r]));
  const tickers = await db.prisma.storyTicker.findMany({ where: { sourceId } });
  const addedAt = new Map(tickers.map((t) => [t.ticker, t.addedAt.getTime()]));
  const say = (message: string) => problems.length < 20 && problems.push(message);

  for (const story of truth.open) {
    const row = copy.get(story.id);
    if (!row)
      say(`open story ${story.id} (${story.ticker} v${story.version}) missing from the copy`);
    else if (row.closed) say(`open story ${story.id} is closed in the copy`);
    else if (row.version !== story.version)
      say(`${story.id}: copy v${row.version}, API v${story.version}`);
    else if (!isDeepStrictEqual(row.story, story))
      say(`${story.id}: snapshot differs at v${story.version}`);
  }
  let resurrections = 0;
  const closed = new Map(truth.closed.map((c) => [c.id, c]));
  for (const c of truth.closed) {
    const row = copy.get(c.id);
    if (row && !row.closed) {
      resurrections++;
      say(`closed story ${c.id} is open in the copy (v${row.version})`);
    } else if (
      !row &&
      Date.parse(c.closed_at) >= (addedAt.get(c.ticker) ?? Number.POSITIVE_INFINITY)
    ) {
      say(`story ${c.id} closed while followed, but the copy has no row for it`);
    }
  }
  for (const row of rows) {
    if (!row.closed && !truth.open.some((s) => s.id === row.id) && !closed.has(row.id)) {
      say(`the copy has a story the API never had: ${row.id}`);
    }
  }

  let duplicateNotifications = 0;
  if (strong.size !== truth.strong.length)
    say(`the desk reports ${truth.strong.length} strong stories, its events ${strong.size}`);
  for (const [id, at] of strong) {
    const ticker = truth.open.find((s) => s.id === id)?.ticker ?? closed.get(id)?.ticker ?? "";
    const live = at >= (addedAt.get(ticker) ?? Number.POSITIVE_INFINITY);
    const n = sent.get(id) ?? 0;
    if (n > 1) {
      duplicateNotifications += n - 1;
      say(`${id}: "became strong" sent ${n} times`);
    }
    if (live && n === 0 && !crashed.has(id))
      say(`${id} became strong while followed; nobody was told`);
    if (!live && n > 0)
      say(`${id} became strong before its ticker was followed, yet a notification went out`);
  }
  for (const id of sent.keys())
    if (!strong.has(id)) say(`a notification for ${id}, which never became strong`);
  return { duplicateNotifications, resurrections };
}

function mustGet<T>(map: Map<string, T>, key: string): T {
  const value = map.get(key);
  if (value === undefined) throw new Error(`no chaos run for source ${key}`);
  return value;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
