import type pino from "pino";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { type Database, openDatabase } from "@/lib/db";
import { logger } from "@/lib/logger";
import { sleep } from "@/lib/sleep";
import { privatePostgresOrSkip } from "@/lib/testing/privatePostgres";
import { enqueue } from "./enqueue";
import { type QueueWorker, startQueueWorker } from "./queueWorker";

// This file stops and starts PostgreSQL, so it runs on a cluster of its own (never the shared
// test server), created here and destroyed in afterAll (or at exit, or by its watchdog).
const cluster = await privatePostgresOrSkip(
  "the database outage tests (workers/queue/outage.test.ts)",
);
afterAll(() => cluster?.destroy());

interface Logged {
  worker: string | undefined;
  level: "error" | "warn" | "info";
  msg: string;
  at: number;
}

/**
 * Observes what the queue workers log without changing where it goes: every child of the
 * process logger made meanwhile gets error/warn/info wrapped to record the call and pass it on
 * unchanged (to stderr, at the configured level).
 */
function observeLogs(): { logged: Logged[]; restore(): void } {
  const logged: Logged[] = [];
  const root = logger();
  const child = root.child.bind(root);
  const spy = vi.spyOn(root, "child").mockImplementation(((
    bindings: pino.Bindings,
    options?: pino.ChildLoggerOptions,
  ) => {
    const made = child(bindings, options);
    for (const level of ["error", "warn", "info"] as const) {
      const real = made[level].bind(made) as (...args: unknown[]) => void;
      made[level] = ((...args: unknown[]) => {
        const msg = args.find((a) => typeof a === "string") as string | undefined;
        logged.push({ worker: bindings.worker, level, msg: msg ?? "", at: Date.now() });
        real(...args);
      }) as pino.LogFn;
    }
    return made;
  }) as unknown as typeof root.child);
  return { logged, restore: () => spy.mockRestore() };
}

async function until(what: string, check: () => Promise<boolean> | boolean, timeoutMs: number) {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    if (await Promise.resolve(check()).catch(() => false)) return;
    await sleep(50);
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
}

describe.skipIf(!cluster)(
  "queue under a database outage (private PostgreSQL cluster stopped and started; its own cluster, so nothing else shares it)",
  () => {
    // biome-ignore lint/style/noNonNullAssertion: skipped when there is no cluster
    const pg = cluster!;
    let observer: Database;
    const opened: Database[] = [];
    const workers: QueueWorker[] = [];
    const unhandled: unknown[] = [];
    const onUnhandled = (err: unknown) => {
      unhandled.push(err);
    };

    const open = async (poolSize: number) => {
      const db = await openDatabase({ url: pg.url(), poolSize });
      opened.push(db);
      return db;
    };
    const ledgerCount = async () =>
      Number(
        (
          await observer.prisma.$queryRaw<
            { n: number }[]
          >`SELECT count(*)::int AS n FROM outage_ledger`
        )[0]?.n,
      );

    beforeAll(async () => {
      process.on("unhandledRejection", onUnhandled);
      process.on("uncaughtException", onUnhandled);
      observer = await open(4);
      await observer.prisma.$executeRawUnsafe(`
        CREATE TABLE IF NOT EXISTS outage_ledger (
          job_key text PRIMARY KEY,
          worker text NOT NULL,
          attempt int NOT NULL,
          at timestamptz NOT NULL DEFAULT now()
        )`);
    });
    afterAll(async () => {
      process.off("unhandledRejection", onUnhandled);
      process.off("uncaughtException", onUnhandled);
      await Promise.all(opened.map((db) => db.close().catch(() => undefined)));
    });
    beforeEach(async () => {
      unhandled.length = 0;
      await observer.prisma
        .$executeRaw`TRUNCATE jobs, job_failures, lease_events, queue_claim_stats, queue_workers, outage_ledger`;
    });
    afterEach(async () => {
      // A test that failed mid-outage leaves the server down or frozen: bring it back.
      pg.thaw();
      if (!pg.running()) await pg.start();
      await Promise.all(workers.splice(0).map((w) => w.stop(1_000).catch(() => undefined)));
    });

    it("stop PostgreSQL for 20 s mid-run, then start it: workers log it, back off, reconnect and finish; count in equals count out", async () => {
      const N = 2_000;
      const OUTAGE_MS = 20_000;
      const keys = Array.from({ length: N }, (_, i) => `job-${i}`);
      for (let i = 0; i < N; i += 500) {
        await enqueue(
          observer,
          "outage",
          keys.slice(i, i + 500).map((key) => ({ key, payload: { key } })),
        );
      }

      const logs = observeLogs();
      const runs = new Map<string, number>();
      let effects = 0;
      let handlerErrors = 0;
      const start = async (name: string) => {
        const db = await open(6);
        const worker = await startQueueWorker(db, {
          workerId: name,
          queues: {
            outage: {
              concurrency: 8,
              // Jobs whose effect could not be written during the outage are retried soon after.
              retry: { baseDelaySeconds: 0.2, maxDelaySeconds: 2 },
              handler: async (job, { signal }) => {
                const key = job.key ?? "";
                runs.set(key, (runs.get(key) ?? 0) + 1);
                await sleep(15, signal); // work, so the run is still going when the database stops
                if (signal.aborted) return;
                try {
                  const inserted = await db.prisma.$executeRaw`
                    INSERT INTO outage_ledger (job_key, worker, attempt)
                    VALUES (${key}, ${name}, ${job.lease.attempt})
                    ON CONFLICT (job_key) DO NOTHING`;
                  effects += inserted; // after the await: `x += await …` would lose updates
                } catch (err) {
                  handlerErrors++;
                  throw err;
                }
              },
            },
          },
          pollMs: 200,
          sweepMs: 1_000,
          reportMs: 500,
        });
        workers.push(worker);
        return worker;
      };
      const started = Date.now();
      const [a, b] = [await start("outage-a"), await start("outage-b")];
      logs.restore();

      await until("a third of the jobs done", async () => (await ledgerCount()) >= N / 3, 60_000);
      const doneBefore = await ledgerCount();
      const downAt = Date.now();
      await pg.stop("immediate");
      const stopTookMs = Date.now() - downAt;

      // Both workers notice, while the database is still down.
      await until(
        "both workers to note the lost database",
        () => [a, b].every((w) => (w.counters().lastErrorAt?.getTime() ?? 0) >= downAt),
        OUTAGE_MS - 2_000,
      );
      const noticedMs = Date.now() - downAt;
      const completedDuring = a.counters().completed + b.counters().completed;
      await sleep(OUTAGE_MS - (Date.now() - downAt));
      expect(a.counters().completed + b.counters().completed).toBe(completedDuring);

      const upAt = Date.now();
      await pg.start();
      const startTookMs = Date.now() - upAt;
      const outageMs = Date.now() - downAt;

      await until(
        "the first completion after the restart",
        () => a.counters().completed + b.counters().completed > completedDuring,
        30_000,
      );
      const firstProgressMs = Date.now() - upAt;
      await until(
        "every job done",
        async () => (await observer.prisma.job.count()) === 0 && (await ledgerCount()) === N,
        60_000,
      ).catch(async (err) => {
        console.log(
          "DIAG",
          await ledgerCount(),
          JSON.stringify(
            await observer.prisma
              .$queryRaw`select state, count(*)::int n, min(run_at) r, max(attempts) a, now() from jobs group by state`,
          ),
          a.counters(),
          b.counters(),
          a.inFlight(),
          b.inFlight(),
        );
        throw err;
      });
      const drainedMs = Date.now() - upAt;
      // Each worker's LISTEN connection is back, once (no leaked or duplicate subscriptions).
      const listening = async () =>
        (
          await observer.prisma.$queryRaw<{ n: number }[]>`
            SELECT count(*)::int AS n FROM pg_stat_activity WHERE query ILIKE 'LISTEN %'`
        )[0]?.n;
      await until("both LISTEN connections back", async () => (await listening()) === 2, 15_000);
      const listenBackMs = Date.now() - upAt;
      await Promise.all(workers.splice(0).map((w) => w.stop()));

      // Count in equals count out: every job exactly one effect, none left, none parked.
      const ledger = await observer.prisma.$queryRaw<{ job_key: string }[]>`
        SELECT job_key FROM outage_ledger`;
      expect(ledger).toHaveLength(N);
      expect(new Set(ledger.map((r) => r.job_key))).toEqual(new Set(keys));
      expect(effects).toBe(N);
      expect(await observer.prisma.job.count()).toBe(0);
      expect(a.counters().completed + b.counters().completed).toBe(N);
      expect(a.counters().completed).toBeGreaterThan(0);
      expect(b.counters().completed).toBeGreaterThan(0);
      expect(runs.size).toBe(N);

      // Logged: the loss once per worker, and the recovery.
      for (const id of [a.id, b.id]) {
        const mine = logs.logged.filter((l) => l.worker === id);
        const lost = mine.filter(
          (l) => l.level === "error" && l.msg.startsWith("database unreachable"),
        );
        const back = mine.filter((l) => l.level === "info" && l.msg === "database reachable again");
        expect(lost.length, `${id} logged the lost database`).toBeGreaterThanOrEqual(1);
        expect(lost[0]?.at).toBeGreaterThanOrEqual(downAt);
        expect(lost[0]?.at).toBeLessThan(upAt);
        expect(back.length, `${id} logged the recovery`).toBeGreaterThanOrEqual(1);
        expect(back.at(-1)?.at).toBeGreaterThanOrEqual(upAt);
      }
      // …and recorded in its state row.
      const states = await observer.prisma.queueWorker.findMany({ orderBy: { id: "asc" } });
      expect(states.map((s) => s.id)).toEqual([a.id, b.id]);
      for (const s of states) {
        expect(s.state).toBe("stopped");
        expect(s.lastError).toBeTruthy();
        expect(s.lastErrorAt?.getTime()).toBeGreaterThanOrEqual(downAt - 1_000);
      }
      expect(unhandled).toEqual([]);

      const retried = await observer.prisma.jobFailure.count();
      const reruns = [...runs.values()].filter((n) => n > 1).length;
      console.log(
        [
          `outage test: ${N} jobs, 2 workers × 8; ${doneBefore} done when PostgreSQL was stopped`,
          `  stop (pg_ctl -m immediate) took ${stopTookMs} ms; both workers noticed within ${noticedMs} ms`,
          `  database down for ${outageMs} ms (start took ${startTookMs} ms)`,
          `  first completion ${firstProgressMs} ms after the restart; all done ${drainedMs} ms after it; LISTEN back after ${listenBackMs} ms`,
          `  ${retried} failed attempts recorded (effects the outage interrupted), ${reruns} jobs ran more than once, ${handlerErrors} handler errors; whole run ${Date.now() - started} ms`,
        ].join("\n"),
      );
    });

    it.each([
      ["stopped", "PostgreSQL stopped: connections refused"],
      ["frozen", "PostgreSQL frozen (SIGSTOP): nothing answers, nothing fails, as in a partition"],
    ] as const)(
      "lost DB connection longer than the lease → the worker aborts its handlers; the sweeper runs the job again, once (%s: %s)",
      async (mode, _how) => {
        const LEASE_S = 2;
        await enqueue(observer, "long", [{ key: "long-1" }]);
        const logs = observeLogs();
        const db = await open(4);
        const attempts: {
          attempt: number;
          reclaimed: boolean;
          abortedAt?: number;
          reason?: string;
        }[] = [];
        const worker = await startQueueWorker(db, {
          workerId: "lease-holder",
          queues: {
            long: {
              leaseSeconds: LEASE_S,
              handler: async (job, { signal }) => {
                const entry: (typeof attempts)[number] = {
                  attempt: job.lease.attempt,
                  reclaimed: job.reclaimed,
                };
                attempts.push(entry);
                if (attempts.length === 1) {
                  // Runs until told to stop, and then makes no effect.
                  await new Promise((resolve) =>
                    signal.addEventListener("abort", resolve, { once: true }),
                  );
                  entry.abortedAt = Date.now();
                  entry.reason = (signal.reason as Error)?.message;
                  return;
                }
                await db.prisma.$executeRaw`
                INSERT INTO outage_ledger (job_key, worker, attempt)
                VALUES (${job.key}, 'lease-holder', ${job.lease.attempt})
                ON CONFLICT (job_key) DO NOTHING`;
              },
            },
          },
          pollMs: 100,
          sweepMs: 250,
        });
        workers.push(worker);
        logs.restore();

        await until("the handler to start", () => attempts.length === 1, 10_000);
        await sleep(LEASE_S * 500); // a heartbeat or two while the database is up
        const downAt = Date.now();
        if (mode === "stopped") await pg.stop("immediate");
        else pg.freeze();
        await until(
          "the handler to be aborted",
          () => attempts[0]?.abortedAt !== undefined,
          10_000,
        );
        const abortedAfterMs = (attempts[0]?.abortedAt ?? 0) - downAt;
        // Down for longer than the lease, so the lease has surely run out by the database clock.
        await sleep(Math.max(0, (LEASE_S + 1) * 1000 - (Date.now() - downAt)));
        const upAt = Date.now();
        if (mode === "stopped") await pg.start();
        else pg.thaw();

        await until(
          "the job to run again and complete",
          async () => (await observer.prisma.job.count()) === 0 && (await ledgerCount()) === 1,
          30_000,
        );
        const rerunAfterMs = Date.now() - upAt;
        await Promise.all(workers.splice(0).map((w) => w.stop()));

        expect(attempts[0]?.reason).toMatch(/longer than the lease/);
        expect(abortedAfterMs).toBeGreaterThanOrEqual(LEASE_S * 1000 - 500);
        expect(abortedAfterMs).toBeLessThan(LEASE_S * 1000 + 3_000);
        expect(attempts.map((x) => [x.attempt, x.reclaimed])).toEqual([
          [1, false],
          [2, true],
        ]);
        expect(attempts[1]?.abortedAt).toBeUndefined();
        const ledger = await observer.prisma.$queryRaw<{ job_key: string; attempt: number }[]>`
        SELECT job_key, attempt FROM outage_ledger`;
        expect(ledger).toEqual([{ job_key: "long-1", attempt: 2 }]);
        const kinds = (await observer.prisma.leaseEvent.findMany({ orderBy: { id: "asc" } })).map(
          (e) => e.kind,
        );
        expect(kinds).toEqual(["expired", "reclaimed"]);
        const claims = await observer.prisma.queueClaimStat.aggregate({
          where: { queue: "long" },
          _sum: { claims: true, reclaimed: true },
        });
        expect(claims._sum).toEqual({ claims: 2n, reclaimed: 1n });
        expect(worker.counters().completed).toBe(1);
        const mine = logs.logged.filter((l) => l.worker === worker.id);
        expect(
          mine.some((l) => l.level === "warn" && l.msg === "lease given up; handler aborted"),
        ).toBe(true);
        expect(mine.some((l) => l.msg.startsWith("database unreachable"))).toBe(true);
        expect(unhandled).toEqual([]);
        console.log(
          `lease test (${mode}): lease ${LEASE_S} s; handler aborted ${abortedAfterMs} ms after PostgreSQL was ${mode}; ` +
            `down ${upAt - downAt} ms; re-run by the sweeper and completed ${rerunAfterMs} ms after the restart`,
        );
      },
    );
  },
);
