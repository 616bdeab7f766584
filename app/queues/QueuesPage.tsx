"use client";

import Link from "next/link";
import { BarsChart, type SeriesPoint, TimeSeriesChart } from "@/components/charts";
import { useAdminSession } from "@/components/hooks/useAdminSession";
import { type QueueDepthResponse, useQueueDepthQuery } from "@/components/hooks/useQueueDepth";
import {
  type QueuesJson,
  type QueuesResponse,
  useQueueActionMutation,
  useQueuesQuery,
} from "@/components/hooks/useQueues";
import { TimeRangePicker, useRangeHref, useTimeRange } from "@/components/ui/TimeRange";
import { nearestHours, RANGE_LABELS, type TimeRange } from "@/components/ui/timeRanges";
import { ms, relative, utc, when } from "@/lib/dashboard/format";
import styles from "./queues.module.css";

/** The windows /api/queues answers for (its claims, lease events and builds, up to a day). */
const QUEUES_HOURS = [1, 6, 24];

export function QueuesPage() {
  const range = useTimeRange();
  const hours = nearestHours(range, QUEUES_HOURS);
  const { data, error } = useQueuesQuery({ hours });
  const depth = useQueueDepthQuery({ range });
  const q = data?.queues;
  return (
    <>
      <h1>Queues</h1>
      <p className="lede">
        Jobs by stage and state, what went through each queue, depth over time, the jobs waiting to
        retry, how long due jobs waited to be claimed, leases in flight and what happened to them,
        and the workers. Refreshed every 10 seconds.
      </p>
      <TimeRangePicker
        note={
          range === "7d"
            ? "Depth over time covers the week; throughput, lag and leases the last 24 h."
            : undefined
        }
      />
      {error ? <p className={styles.error}>Queues unavailable: {error.message}</p> : null}
      {q && data ? (
        <>
          <Body q={q} paused={data.paused} />
          <Throughput data={data} />
          <Depth range={range} data={depth.data} error={depth.error} />
          <Retrying data={data} />
          <Leases q={q} />
        </>
      ) : !error ? (
        <p>Loading…</p>
      ) : null}
    </>
  );
}

const DEPTH_SERIES = [
  { field: "due", name: "waiting (due)" },
  { field: "running", name: "running" },
  { field: "retrying", name: "retrying" },
  { field: "dead", name: "dead-lettered" },
];

/**
 * Per queue, how many jobs were waiting, running, waiting out a retry and dead-lettered over the
 * range, from the workers' samples (one per queue and minute). A queue that held nothing all
 * along is named, not drawn.
 */
function Depth({
  range,
  data,
  error,
}: {
  range: TimeRange;
  data: QueueDepthResponse | undefined;
  error: Error | null;
}) {
  const drawn = data?.queues.filter((d) => Object.values(d.peak).some((n) => n > 0)) ?? [];
  const empty = data?.queues.filter((d) => !drawn.includes(d)).map((d) => d.queue) ?? [];
  const bucket = data ? bucketWords(data.bucketSeconds) : "";
  return (
    <>
      <h2>Depth over time</h2>
      {error ? <p className={styles.error}>Depth unavailable: {error.message}</p> : null}
      {!data && !error ? <p>Loading…</p> : null}
      {data ? (
        <p className="lede">
          Jobs per queue and state, sampled every minute by the workers serving the queue; each
          point is the largest sample in its {bucket}. Waiting is due and not yet claimed; retrying
          failed and waits out its delay. A gap: no worker served the queue then.
        </p>
      ) : null}
      {data && data.queues.length === 0 ? (
        <p className="empty">
          No depth sampled in the {RANGE_LABELS[range]}: no worker has run in that time.
        </p>
      ) : null}
      {drawn.length > 0 ? (
        <div className={styles.charts}>
          {drawn.map((d) => (
            <section key={d.queue} className={styles.panel} data-depth-queue={d.queue}>
              <h3>
                {d.queue} · peak {d.peak.due} waiting, {d.peak.running} running, {d.peak.retrying}{" "}
                retrying, {d.peak.dead} dead-lettered
              </h3>
              <TimeSeriesChart
                data={d.points.map(
                  (p): SeriesPoint => ({
                    t: p.t,
                    due: p.due,
                    running: p.running,
                    retrying: p.retrying,
                    dead: p.dead,
                  }),
                )}
                series={DEPTH_SERIES}
                label={`${d.queue}: jobs waiting, running, retrying and dead-lettered over time`}
              />
            </section>
          ))}
        </div>
      ) : null}
      {empty.length > 0 ? (
        <p className={styles.sub} data-testid="depth-empty">
          Empty all along: {empty.join(", ")}.
        </p>
      ) : null}
    </>
  );
}

/** 60 → "minute", 600 → "10 minutes", 3600 → "hour". */
function bucketWords(seconds: number): string {
  if (seconds % 3600 === 0) return seconds === 3600 ? "hour" : `${seconds / 3600} hours`;
  return seconds === 60 ? "minute" : `${Math.round(seconds / 60)} minutes`;
}

/** Per queue, what went through it in each bucket: processed, failed, dead-lettered. */
function Throughput({ data }: { data: QueuesResponse }) {
  const { flow, queues } = data;
  const minutes = Math.round(queues.bucketSeconds / 60);
  return (
    <>
      <h2>Throughput</h2>
      <p className="lede">
        Jobs per {minutes}-minute bucket: processed (claimed less failed attempts; finished jobs are
        deleted, so they are not counted one by one), failed attempts and jobs dead-lettered.
      </p>
      {flow.length === 0 ? (
        <p className="empty">
          Nothing claimed, failed or dead-lettered in the last {queues.hours} h.
        </p>
      ) : (
        <div className={styles.charts}>
          {flow.map((f) => (
            <section key={f.queue} className={styles.panel} data-flow-queue={f.queue}>
              <h3>
                {f.queue} · {f.totals.processed} processed, {f.totals.failed} failed,{" "}
                {f.totals.deadLettered} dead-lettered
              </h3>
              <TimeSeriesChart
                data={f.points.map(
                  (p): SeriesPoint => ({
                    t: p.t,
                    processed: p.processed,
                    failed: p.failed,
                    deadLettered: p.deadLettered,
                  }),
                )}
                series={[
                  { field: "processed", name: "processed" },
                  { field: "failed", name: "failed" },
                  { field: "deadLettered", name: "dead-lettered" },
                ]}
                label={`${f.queue}: jobs processed, failed and dead-lettered over time`}
              />
            </section>
          ))}
        </div>
      )}
    </>
  );
}

/** The jobs that failed and wait for another attempt, soonest due first. */
function Retrying({ data }: { data: QueuesResponse }) {
  const { total, jobs } = data.retrying;
  const now = Date.now();
  return (
    <>
      <h2>Waiting to retry</h2>
      {jobs.length === 0 ? (
        <p className="empty">No job is waiting to retry.</p>
      ) : (
        <>
          <p className="lede">
            {total} job{total === 1 ? "" : "s"} failed and wait for another attempt
            {total > jobs.length ? `; the ${jobs.length} due soonest` : ""}.
          </p>
          <table className={`sources ${styles.table}`} data-testid="retrying">
            <thead>
              <tr>
                <th scope="col">Job</th>
                <th scope="col" className="num">
                  Attempts
                </th>
                <th scope="col">Next attempt</th>
                <th scope="col">Last failed</th>
                <th scope="col">Last error</th>
              </tr>
            </thead>
            <tbody>
              {jobs.map((j) => (
                <tr key={j.id} data-retry-queue={j.queue}>
                  <td>
                    {j.queue} {j.key ?? `#${j.id}`}
                    {j.sourceId ? <div className={styles.sub}>{j.sourceId}</div> : null}
                  </td>
                  <td className="num">
                    {j.attempts} of {j.maxAttempts}
                  </td>
                  <td title={utc(j.runAt)}>{relative(j.runAt, now)}</td>
                  <td title={utc(j.lastFailedAt)}>{when(j.lastFailedAt)}</td>
                  <td className={styles.sub}>{j.error ?? "–"}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      )}
    </>
  );
}

/** Fetch → read model, in the stages' buckets: what the stages' waits add up to for readers. */
function ReaderLag({ q }: { q: QueuesJson }) {
  const href = useRangeHref();
  const drawn = q.readModelLag.filter((p) => p.lagP99Ms !== null);
  const inSeconds = Math.max(0, ...drawn.map((p) => p.lagP99Ms ?? 0)) >= 10_000;
  const scale = inSeconds ? 1000 : 1;
  return (
    <section className={`${styles.panel} ${styles.headline}`} data-lag-queue="read-model">
      <h3>
        fetch → readers · {drawn.reduce((n, p) => n + p.changed, 0)} stories ·{" "}
        <Link href={href("/read-path")}>Read path →</Link>
      </h3>
      {drawn.length === 0 ? (
        <p className={styles.sub}>No story reached the read model in the last {q.hours} h.</p>
      ) : (
        <TimeSeriesChart
          data={q.readModelLag.map(
            (p): SeriesPoint => ({
              t: p.t,
              p50: p.lagP50Ms === null ? null : p.lagP50Ms / scale,
              p99: p.lagP99Ms === null ? null : p.lagP99Ms / scale,
            }),
          )}
          series={[
            { field: "p50", name: "p50" },
            { field: "p99", name: "p99" },
          ]}
          unit={inSeconds ? " s" : " ms"}
          sparse
          label="Lag from fetch to the read model, p50 and p99 over time"
        />
      )}
    </section>
  );
}

/**
 * Pause or resume one queue (admin): every worker stops claiming from it, leased jobs finish.
 * Shown only where admin actions are possible; the server checks again.
 */
function PauseButton({ queue, paused }: { queue: string; paused: boolean }) {
  const session = useAdminSession();
  const act = useQueueActionMutation();
  if (!session.data?.adminActions) return null;
  const action = paused ? "resume" : "pause";
  return (
    <>
      <button
        type="button"
        className={styles.action}
        disabled={act.isPending}
        onClick={() => act.mutate({ queue, action })}
        aria-label={`${paused ? "Resume" : "Pause"} ${queue}`}
      >
        {paused ? "Resume" : "Pause"}
      </button>
      {act.error ? <span className={styles.error}> {act.error.message}</span> : null}
    </>
  );
}

function Body({ q, paused }: { q: QueuesJson; paused: QueuesResponse["paused"] }) {
  const href = useRangeHref();
  const now = Date.now();
  const pausedSince = new Map(paused.map((p) => [p.queue, p.since]));
  return (
    <>
      <h2>Depth per stage</h2>
      {paused.length > 0 ? (
        <p className={styles.paused} role="status" data-testid="paused-queues">
          Paused (no new claims, leased jobs finish):{" "}
          {paused.map((p) => `${p.queue} since ${when(p.since)}`).join("; ")}
        </p>
      ) : null}
      {q.depth.length === 0 ? (
        <p className="empty">No jobs.</p>
      ) : (
        <table className={`sources ${styles.table}`} data-testid="depth">
          <thead>
            <tr>
              <th scope="col">Queue</th>
              <th scope="col" className="num" title="Ready and due now: the backlog">
                Due
              </th>
              <th scope="col" className="num" title="Ready, due later (recurring polls)">
                Scheduled
              </th>
              <th scope="col" className="num">
                Leased
              </th>
              <th scope="col" className="num">
                Dead
              </th>
              <th scope="col">Oldest due</th>
              <th scope="col">Claiming</th>
            </tr>
          </thead>
          <tbody>
            {q.depth.map((d) => (
              <tr key={d.queue} data-queue={d.queue}>
                <td>{d.queue}</td>
                <td className="num">{d.due}</td>
                <td className="num">{d.ready - d.due}</td>
                <td className="num">{d.leased}</td>
                <td className="num">
                  {d.dead > 0 ? <Link href={href("/dead-letters")}>{d.dead}</Link> : 0}
                </td>
                <td title={utc(d.oldestDueAt)}>{relative(d.oldestDueAt, now)}</td>
                <td className={styles.nowrap} data-paused={pausedSince.has(d.queue)}>
                  {pausedSince.has(d.queue) ? (
                    <span
                      className="badge health-silent"
                      title={`Paused ${when(pausedSince.get(d.queue))}: no new claims`}
                    >
                      paused
                    </span>
                  ) : (
                    "yes"
                  )}{" "}
                  <PauseButton queue={d.queue} paused={pausedSince.has(d.queue)} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}

      <h2>Lag p50 / p99</h2>
      <p className="lede">
        First the headline: from fetch to readers (the read model), then per stage how long a job
        had been due when a worker claimed it, per {Math.round(q.bucketSeconds / 60)}-minute bucket
        (p50 and p99).
      </p>
      <ReaderLag q={q} />
      {q.lag.length === 0 ? (
        <p className="empty">No claims in the last {q.hours} h.</p>
      ) : (
        <div className={styles.charts}>
          {q.lag.map((l) => {
            // Seconds read badly below one (0.0105 s): small lags are drawn in milliseconds.
            const inSeconds = Math.max(...l.points.map((p) => p.p99Ms)) >= 10_000;
            const scale = inSeconds ? 1000 : 1;
            return (
              <section key={l.queue} className={styles.panel} data-lag-queue={l.queue}>
                <h3>
                  {l.queue} · {l.points.reduce((n, p) => n + p.claims, 0)} claims
                </h3>
                <TimeSeriesChart
                  data={l.points.map(
                    (p): SeriesPoint => ({ t: p.t, p50: p.p50Ms / scale, p99: p.p99Ms / scale }),
                  )}
                  series={[
                    { field: "p50", name: "p50" },
                    { field: "p99", name: "p99" },
                  ]}
                  unit={inSeconds ? " s" : " ms"}
                  label={`${l.queue}: claim lag p50 and p99 over time`}
                />
              </section>
            );
          })}
        </div>
      )}
    </>
  );
}

/** Leases in flight and what happened to them, then the workers. */
function Leases({ q }: { q: QueuesJson }) {
  const now = Date.now();
  return (
    <>
      <h2>Leases</h2>
      <div className={styles.charts}>
        <section className={styles.panel}>
          <h3>
            {q.inFlight.total} in flight · last {q.hours} h: {q.leaseEvents.counts.expired} expired,{" "}
            {q.leaseEvents.counts.reclaimed} reclaimed, {q.leaseEvents.counts.released} released
          </h3>
          <BarsChart
            data={q.leaseEvents.histogram}
            x="bucket"
            y="total"
            label="Lease age when expired, reclaimed or released"
          />
          <p className={styles.sub}>Lease age when it expired, was reclaimed or was released.</p>
        </section>
        <section className={styles.panel}>
          <h3>Oldest leases in flight</h3>
          {q.inFlight.leases.length === 0 ? (
            <p className={styles.sub}>None.</p>
          ) : (
            <table className={`sources ${styles.table}`} data-testid="leases">
              <thead>
                <tr>
                  <th scope="col">Job</th>
                  <th scope="col">Owner</th>
                  <th scope="col" className="num">
                    Age
                  </th>
                  <th scope="col">Expires</th>
                </tr>
              </thead>
              <tbody>
                {q.inFlight.leases.map((l) => (
                  <tr key={l.id}>
                    <td>
                      {l.queue} {l.key ?? `#${l.id}`}
                      {l.attempt > 1 ? ` (attempt ${l.attempt})` : ""}
                    </td>
                    <td className={styles.sub}>{l.owner}</td>
                    <td className="num">{ms(l.ageMs)}</td>
                    <td title={utc(l.expiresAt)}>{relative(l.expiresAt, now)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </section>
      </div>

      <h2>Workers</h2>
      {q.workers.length === 0 ? (
        <p className="empty">No worker has reported.</p>
      ) : (
        <table className={`sources ${styles.table}`} data-testid="workers">
          <thead>
            <tr>
              <th scope="col">Worker</th>
              <th scope="col">State</th>
              <th scope="col">Started</th>
              <th scope="col">Seen</th>
              <th scope="col" className="num">
                Claimed
              </th>
              <th scope="col" className="num">
                Completed
              </th>
              <th scope="col" className="num">
                Failed
              </th>
              <th scope="col" className="num">
                In flight
              </th>
              <th scope="col">Last claim</th>
              <th scope="col">Last error</th>
            </tr>
          </thead>
          <tbody>
            {q.workers.map((w) => (
              <tr key={w.id} data-worker-state={w.state}>
                <td>
                  {w.id}
                  <div className={styles.sub}>
                    {w.host} pid {w.pid} · {w.queues.join(", ")}
                  </div>
                </td>
                <td>
                  {w.state === "lost" ? (
                    <span
                      className="badge health-failing"
                      title="No report for 30 s or more: killed or cut off from the database. Its leases return to the queue when they run out."
                    >
                      lost
                    </span>
                  ) : (
                    w.state
                  )}
                </td>
                <td title={utc(w.startedAt)}>{relative(w.startedAt, now)}</td>
                <td title={utc(w.seenAt)}>{relative(w.seenAt, now)}</td>
                <td className="num">{w.claimed}</td>
                <td className="num">{w.completed}</td>
                <td className="num">{w.failed}</td>
                <td className="num">{w.inFlight}</td>
                <td title={utc(w.lastClaimAt)}>{relative(w.lastClaimAt, now)}</td>
                <td className={styles.sub} title={utc(w.lastErrorAt)}>
                  {w.lastError ?? "–"}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </>
  );
}
