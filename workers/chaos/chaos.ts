import { config } from "@/lib/config";
import type { Database } from "@/lib/db";
import { enqueue } from "@/workers/queue/enqueue";
import { PermanentJobError } from "@/workers/queue/queueWorker";
import { FETCH_QUEUE } from "@/workers/stages/frontier";

/**
 * In-process stage faults for end-to-end tests ("make a stage fail"), settable only with
 * WIREWATCH_CHAOS=on. A fault names a stage and a source; the stage's handler calls
 * throwIfChaos(stage, sourceId) first and throws while the fault is set.
 *
 * A permanent fault throws a PermanentJobError, which parks the job at once: fetch jobs retry 10
 * times from a 5 s base, minutes of waiting an e2e run cannot afford. A transient one throws a
 * plain error and goes through the queue's retries like a real outage would.
 *
 * The faults live on globalThis: Next.js loads route handlers and instrumentation.ts (which runs
 * the workers) as separate module graphs in one process, and both must see the same faults.
 */

export const CHAOS_STAGES = ["fetch"] as const;
export type ChaosStage = (typeof CHAOS_STAGES)[number];

export interface ChaosFault {
  stage: ChaosStage;
  sourceId: string;
  permanent: boolean;
  since: string;
  /** Jobs this fault has failed so far. */
  hits: number;
}

const store = globalThis as unknown as { wirewatchChaos?: Map<string, ChaosFault> };
const faults = (): Map<string, ChaosFault> => {
  store.wirewatchChaos ??= new Map();
  return store.wirewatchChaos;
};
const keyOf = (stage: string, sourceId: string) => `${stage}\u0000${sourceId}`;

export function chaosEnabled(): boolean {
  return config().WIREWATCH_CHAOS === "on";
}

export class ChaosDisabledError extends Error {
  constructor() {
    super("chaos is off (WIREWATCH_CHAOS=on enables it)");
    this.name = "ChaosDisabledError";
  }
}

export function listChaos(): ChaosFault[] {
  return [...faults().values()];
}

export function setChaos(fault: { stage: ChaosStage; sourceId: string; permanent?: boolean }) {
  if (!chaosEnabled()) throw new ChaosDisabledError();
  const set: ChaosFault = {
    stage: fault.stage,
    sourceId: fault.sourceId,
    permanent: fault.permanent ?? true,
    since: new Date().toISOString(),
    hits: 0,
  };
  faults().set(keyOf(fault.stage, fault.sourceId), set);
  return set;
}

/** Clears one fault, or every fault when no source is named; returns how many were cleared. */
export function clearChaos(stage?: ChaosStage, sourceId?: string): number {
  if (!chaosEnabled()) throw new ChaosDisabledError();
  if (stage && sourceId) return faults().delete(keyOf(stage, sourceId)) ? 1 : 0;
  const n = faults().size;
  faults().clear();
  return n;
}

/** Called first in a stage's handler: throws while a fault is set for this stage and source. */
export function throwIfChaos(stage: ChaosStage, sourceId: string | undefined): void {
  const all = store.wirewatchChaos;
  if (!all || all.size === 0 || sourceId === undefined) return;
  const fault = all.get(keyOf(stage, sourceId));
  if (!fault) return;
  fault.hits += 1;
  const message = `chaos: injected ${stage} fault for source ${sourceId}`;
  if (fault.permanent) throw new PermanentJobError(message, "chaos");
  throw Object.assign(new Error(message), { code: "chaos" });
}

/**
 * Puts `count` fetch jobs for a source on the queue now, so a fault is exercised at once rather
 * than at the source's next poll. Each probe is its own collector name, which no source has:
 * without a fault the stage finds nothing to collect and the job completes (and is deleted);
 * with one it fails. The frontier never re-creates them, so a requeued probe is not refused as
 * "already queued" the way a recurring source job is once the frontier has replaced it.
 */
export async function enqueueChaosProbes(
  db: Database,
  sourceId: string,
  count: number,
): Promise<string[]> {
  if (!chaosEnabled()) throw new ChaosDisabledError();
  const stamp = Date.now().toString(36);
  return enqueue(
    db,
    FETCH_QUEUE,
    Array.from({ length: count }, (_, i) => {
      const collector = `chaos-probe-${stamp}-${i + 1}`;
      return {
        key: `${sourceId}/${collector}`,
        sourceId,
        payload: { sourceId, collector },
        maxAttempts: 1,
      };
    }),
  );
}

export interface ProbeFate {
  id: string;
  /** The job's state; "done" once the row is gone (completing a job deletes it). */
  state: "ready" | "leased" | "dead" | "archived" | "done";
  /** Times it was claimed (each claim is one run), and the runs that failed. */
  claims: number;
  failures: number;
}

/**
 * What became of chaos probes, so a test can tell that a requeued probe ran and succeeded (done,
 * with one claim more than its failures) rather than only that it left the dead letters (it may
 * still be waiting its turn).
 *
 * Claims are counted from how each one ended, because nothing keeps a row per claim
 * (queue_claim_stats sums claims per queue and minute) and jobs.attempts starts over at a requeue
 * and goes with the row once the job completes: every claim either failed (a job_failures row:
 * the stage threw or the lease ran out), was released at a stop (a lease_events 'released' row),
 * is still running (leased), or completed (the row is gone: a probe never recurs).
 */
export async function probeFates(db: Database, ids: string[]): Promise<ProbeFate[]> {
  if (!chaosEnabled()) throw new ChaosDisabledError();
  if (ids.length === 0) return [];
  return db.prisma.$queryRaw<ProbeFate[]>`
    SELECT id, state,
           failures + released + (CASE WHEN state IN ('leased', 'done') THEN 1 ELSE 0 END) AS claims,
           failures
    FROM (
      SELECT p.n, p.id::text AS id, coalesce(j.state, 'done') AS state,
             (SELECT count(*)::int FROM job_failures f WHERE f.job_id = p.id) AS failures,
             (SELECT count(*)::int FROM lease_events e
              WHERE e.job_id = p.id AND e.kind = 'released') AS released
      FROM unnest(${ids}::bigint[]) WITH ORDINALITY AS p(id, n)
      LEFT JOIN jobs j ON j.id = p.id
    ) f
    ORDER BY n`;
}
