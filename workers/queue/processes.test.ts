import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { queuesView } from "@/lib/dashboard/queues";
import { countWorkers } from "@/lib/dashboard/workers";
import { createScratchDatabase, type ScratchDatabase } from "@/lib/scratchDatabase";
import { sleep } from "@/lib/sleep";
import { requireRealPostgres, testServerUrl } from "@/lib/testing/db";
import { enqueue } from "./enqueue";
import {
  createLedgerTables,
  spawnWorkerProcess,
  type WorkerProcess,
  type WorkerProcessOptions,
} from "./testing/workerProcess";

// Real worker processes against one PostgreSQL database: many racing for the same rows, one
// killed with SIGKILL while it holds leases, one stopped with SIGTERM while it has work in
// flight. Each worker runs the `ledger` handler (workerProcess.ts): an effect per job key
// (INSERT … ON CONFLICT DO NOTHING) and a row per run, so a job run twice shows up in `runs`.

describe.skipIf(!requireRealPostgres("the queue's multi-process tests (kill -9, SIGTERM)"))(
  "queue worker processes",
  () => {
    let scratch: ScratchDatabase;
    const started: WorkerProcess[] = [];

    beforeAll(async () => {
      scratch = await createScratchDatabase("ww_test", testServerUrl(), { poolSize: 4 });
      await createLedgerTables(scratch.db);
    });
    afterEach(async () => {
      // Whatever a failed test left running.
      for (const w of started.splice(0)) {
        if (w.child.exitCode === null && w.child.signalCode === null) w.child.kill("SIGKILL");
        await w.exited;
      }
    });
    afterAll(() => scratch?.dispose());
    beforeEach(async () => {
      await scratch.db.prisma.$executeRawUnsafe(
        "TRUNCATE jobs, job_failures, lease_events, queue_claim_stats, queue_workers, effects, runs",
      );
    });

    const sql = <T>(query: string, ...params: unknown[]) =>
      scratch.db.prisma.$queryRawUnsafe<T[]>(query, ...params);
    const one = async <T>(query: string, ...params: unknown[]): Promise<T> => {
      const rows = await sql<T>(query, ...params);
      if (rows.length !== 1) throw new Error(`expected one row from: ${query}`);
      return rows[0] as T;
    };
    const count = async (query: string, ...params: unknown[]) =>
      (await one<{ n: number }>(`SELECT (${query})::int AS n`, ...params)).n;

    const spawn = async (o: Omit<WorkerProcessOptions, "url">) => {
      const w = await spawnWorkerProcess({ url: scratch.where, ...o });
      started.push(w);
      return w;
    };
    async function until(what: string, check: () => Promise<boolean>, timeoutMs = 30_000) {
      const end = Date.now() + timeoutMs;
      while (Date.now() < end) {
        if (await check()) return;
        await sleep(25);
      }
      const logs = started.map((w) => `--- ${w.id}\n${w.stderr()}`).join("\n");
      throw new Error(`timed out waiting for ${what}\n${logs}`);
    }
    const leasedBy = (workerId: string) =>
      count("SELECT count(*) FROM jobs WHERE state = 'leased' AND lease_owner = $1", workerId);

    it("8 processes drain 20,000 jobs: one completion per job, no (job, attempt) claimed twice", async () => {
      const N = 20_000;
      const t0 = performance.now();
      const workers = await Promise.all(
        Array.from({ length: 8 }, () =>
          spawn({
            queue: "race",
            mode: "ledger",
            concurrency: 16,
            batchSize: 16,
            poolSize: 3,
            pollMs: 200,
          }),
        ),
      );
      const tReady = performance.now();
      // Enqueued while all eight are waiting: every batch's NOTIFY sends all of them after the
      // same rows at once.
      const keys: string[] = [];
      for (let from = 0; from < N; from += 1_000) {
        const batch = Array.from({ length: 1_000 }, (_, i) => ({
          key: `k${from + i}`,
          payload: { n: from + i },
        }));
        keys.push(...batch.map((j) => j.key));
        await enqueue(scratch.db, "race", batch);
      }
      await until(
        "the queue to drain",
        async () => (await count("SELECT count(*) FROM jobs")) === 0,
        60_000,
      );
      const tDrained = performance.now();
      const exits = await Promise.all(workers.map((w) => w.terminate()));
      console.info(
        `8 processes: ready in ${Math.round(tReady - t0)} ms ` +
          `(each ${workers.map((w) => Math.round(w.startMs)).join("/")} ms); ` +
          `${N} jobs drained in ${Math.round(tDrained - tReady)} ms`,
      );
      expect(exits.map((e) => e.code)).toEqual(Array(8).fill(0));

      // Exactly one completion per job: as many effects and runs as jobs, and nothing left.
      expect(await count("SELECT count(*) FROM effects")).toBe(N);
      expect(await count("SELECT count(*) FROM runs")).toBe(N);
      expect(await count("SELECT count(DISTINCT job_key) FROM runs")).toBe(N);
      expect(await count("SELECT count(*) FROM jobs")).toBe(0);
      expect(await count("SELECT count(*) FROM job_failures")).toBe(0);
      // No (job, attempt) run twice, and every job claimed exactly once: each run is a row of
      // `runs` with the attempt it held, and the claim counts add up to N with no reclaim.
      const doubles = await sql<{ job_key: string; attempt: number; n: number }>(
        `SELECT job_key, attempt, count(*)::int AS n FROM runs
         GROUP BY job_key, attempt HAVING count(*) > 1`,
      );
      expect(doubles).toEqual([]);
      expect(await count("SELECT count(*) FROM runs WHERE attempt = 1")).toBe(N);
      expect(
        await one(
          "SELECT sum(claims)::int AS claims, sum(reclaimed)::int AS reclaimed FROM queue_claim_stats",
        ),
      ).toEqual({ claims: N, reclaimed: 0 });
      // Nothing expired, was reclaimed or released (claims and extensions write no lease event).
      expect(await count("SELECT count(*) FROM lease_events")).toBe(0);
      // The same result as running them one after another: every key's effect, with its value.
      const effects = await sql<{ job_key: string; value: bigint }>(
        "SELECT job_key, value FROM effects",
      );
      expect(new Set(effects.map((e) => e.job_key))).toEqual(new Set(keys));
      expect(effects.every((e) => e.job_key === `k${e.value}`)).toBe(true);
      // All eight took part, and all say so.
      const byWorker = await sql<{ worker: string; n: number }>(
        "SELECT worker, count(*)::int AS n FROM runs GROUP BY worker",
      );
      expect(byWorker.map((r) => r.worker).sort()).toEqual(workers.map((w) => w.id).sort());
      const states = await sql<{ id: string; state: string; completed: bigint }>(
        "SELECT id, state, completed FROM queue_workers",
      );
      expect(states.every((s) => s.state === "stopped")).toBe(true);
      expect(states.reduce((sum, s) => sum + Number(s.completed), 0)).toBe(N);
    });

    it("kill -9 with 50 leases held: another process re-runs all 50 once leases run out", async () => {
      const LEASE_S = 2;
      const SWEEP_MS = 500;
      const POLL_MS = 200;
      const victim = await spawn({
        queue: "crash",
        mode: "ledger",
        sleepMs: 600_000, // holds every lease (heartbeating) until killed
        concurrency: 50,
        batchSize: 50,
        leaseSeconds: LEASE_S,
        sweepMs: SWEEP_MS,
        pollMs: POLL_MS,
      });
      await enqueue(
        scratch.db,
        "crash",
        Array.from({ length: 50 }, (_, i) => ({ key: `c${i}`, payload: { n: i } })),
      );
      await until("50 leases held by the victim", async () => (await leasedBy(victim.id)) === 50);
      // Let a heartbeat extend them at least once: the leases are live, not just fresh (an
      // extended lease ends later than its claim's lease would have).
      await until(
        "a heartbeat",
        async () =>
          (await count(
            `SELECT count(*) FROM jobs WHERE state = 'leased'
               AND lease_expires_at > leased_at + make_interval(secs => $1::float8)`,
            LEASE_S,
          )) === 50,
        LEASE_S * 1000,
      );
      const { left_ms } = await one<{ left_ms: number }>(
        `SELECT extract(epoch FROM max(lease_expires_at) - now())::float8 * 1000 AS left_ms
         FROM jobs WHERE state = 'leased'`,
      );

      const killedAt = performance.now();
      victim.child.kill("SIGKILL");
      const rescuer = await spawn({
        queue: "crash",
        mode: "ledger",
        concurrency: 50,
        batchSize: 50,
        leaseSeconds: LEASE_S,
        sweepMs: SWEEP_MS,
        pollMs: POLL_MS,
      });
      expect((await victim.exited).signal).toBe("SIGKILL");
      await until(
        "all 50 re-run",
        async () =>
          (await count("SELECT count(*) FROM effects")) === 50 &&
          (await count("SELECT count(*) FROM jobs")) === 0,
        20_000,
      );
      const recoveryMs = performance.now() - killedAt;
      // The last lease runs out, then the rescuer's next sweep (its first comes SWEEP_MS after it
      // started) returns the jobs, then its next poll claims them (a sweep sends no NOTIFY).
      const boundMs = Math.max(left_ms, rescuer.startMs) + SWEEP_MS + POLL_MS + 750;
      console.info(
        `kill -9: lease left at kill ${Math.round(left_ms)} ms, rescuer started in ` +
          `${Math.round(rescuer.startMs)} ms, all 50 re-run ${Math.round(recoveryMs)} ms after ` +
          `the kill (bound ${Math.round(boundMs)} ms = max(lease left, start) + sweep ` +
          `${SWEEP_MS} + poll ${POLL_MS} + 750 slack)`,
      );
      expect(recoveryMs).toBeLessThan(boundMs);

      // Exactly 50 effects, all by the rescuer on the second attempt; the victim made none.
      expect(await count("SELECT count(*) FROM effects WHERE worker = $1", rescuer.id)).toBe(50);
      expect(await count("SELECT count(*) FROM runs")).toBe(50);
      expect(
        await count("SELECT count(*) FROM runs WHERE worker = $1 AND attempt = 2", rescuer.id),
      ).toBe(50);
      // Nothing lost or stuck: no job left (none dead), every expiry recorded.
      expect(await count("SELECT count(*) FROM jobs")).toBe(0);
      const kinds = await sql<{ kind: string; worker_id: string; n: number }>(
        `SELECT kind, worker_id, count(*)::int AS n FROM lease_events
         GROUP BY kind, worker_id ORDER BY kind`,
      );
      expect(kinds).toEqual([
        { kind: "expired", worker_id: victim.id, n: 50 },
        { kind: "reclaimed", worker_id: rescuer.id, n: 50 },
      ]);
      expect(
        await one(
          "SELECT sum(claims)::int AS claims, sum(reclaimed)::int AS reclaimed FROM queue_claim_stats",
        ),
      ).toEqual({ claims: 100, reclaimed: 50 });
      expect(
        await count(
          "SELECT count(*) FROM job_failures WHERE kind = 'lease_expired' AND worker_id = $1",
          victim.id,
        ),
      ).toBe(50);
      await rescuer.terminate();
    });

    it("kill -9: the worker shows as lost once its reports stop, on the Queues page and in metrics", async () => {
      const w = await spawn({
        queue: "lost",
        mode: "ledger",
        sleepMs: 600_000,
        concurrency: 1,
        batchSize: 1,
        leaseSeconds: 2,
        sweepMs: 200,
        reportMs: 100,
      });
      await enqueue(scratch.db, "lost", [{ key: "held", payload: { n: 1 } }]);
      await until("the job in flight", async () => (await leasedBy(w.id)) === 1);
      await until(
        "a report with it in flight",
        async () => (await count("SELECT in_flight FROM queue_workers WHERE id = $1", w.id)) === 1,
      );
      const view = (lostAfterSeconds: number) =>
        queuesView(scratch.db, { lostAfterSeconds }).then((q) =>
          q.workers.find((x) => x.id === w.id),
        );
      expect(await view(1)).toMatchObject({ state: "running", inFlight: 1 });
      w.child.kill("SIGKILL");
      expect((await w.exited).signal).toBe("SIGKILL");
      // The row still says what the process last wrote: running, one job in flight.
      expect(await one("SELECT state, in_flight FROM queue_workers WHERE id = $1", w.id)).toEqual({
        state: "running",
        in_flight: 1,
      });
      await sleep(1_200);
      // Derived at read time: lost, and its in-flight count is what it still holds (the lease is
      // not swept yet: nobody else is running).
      expect(await view(1)).toMatchObject({ state: "lost", inFlight: 1 });
      const counts = await countWorkers(scratch.db, 1);
      expect(counts).toMatchObject({ lost: 1, running: 0 });
    });

    it("SIGTERM with jobs in flight: finishes what fits the deadline, releases the rest, stops", async () => {
      const DEADLINE_MS = 1_500;
      const w = await spawn({
        queue: "drain",
        mode: "ledger",
        concurrency: 10,
        batchSize: 10,
        stopDeadlineMs: DEADLINE_MS,
        reportMs: 100,
      });
      // Five finish within the deadline, five would take a minute.
      await enqueue(
        scratch.db,
        "drain",
        Array.from({ length: 10 }, (_, i) => ({
          key: `${i < 5 ? "short" : "long"}${i}`,
          payload: { n: i, sleepMs: i < 5 ? 500 : 60_000 },
        })),
      );
      await until("10 jobs in flight", async () => (await leasedBy(w.id)) === 10);
      const termAt = performance.now();
      const exit = await w.terminate();
      const stopMs = performance.now() - termAt;
      console.info(`SIGTERM: exited ${exit.code} after ${Math.round(stopMs)} ms`);
      expect(exit).toEqual({ code: 0, signal: null });
      expect(stopMs).toBeLessThan(DEADLINE_MS + 2_000);

      // Nothing is leased by it any more; the long jobs are due again at once, the short done.
      expect(await count("SELECT count(*) FROM jobs WHERE lease_owner = $1", w.id)).toBe(0);
      const left = await sql<{ key: string; state: string; attempts: number; due: boolean }>(
        "SELECT key, state, attempts, run_at <= now() AS due FROM jobs ORDER BY key",
      );
      expect(left).toEqual(
        [5, 6, 7, 8, 9].map((i) => ({ key: `long${i}`, state: "ready", attempts: 1, due: true })),
      );
      const effects = await sql<{ job_key: string }>("SELECT job_key FROM effects ORDER BY 1");
      expect(effects.map((e) => e.job_key)).toEqual([0, 1, 2, 3, 4].map((i) => `short${i}`));
      expect(
        await count(
          "SELECT count(*) FROM lease_events WHERE kind = 'released' AND worker_id = $1",
          w.id,
        ),
      ).toBe(5);
      const state = await one<{ state: string; in_flight: number; completed: bigint }>(
        "SELECT state, in_flight, completed FROM queue_workers WHERE id = $1",
        w.id,
      );
      expect(state).toEqual({ state: "stopped", in_flight: 0, completed: 5n });
    });
  },
);
