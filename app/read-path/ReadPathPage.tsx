"use client";

import { type SeriesPoint, TimeSeriesChart } from "@/components/charts";
import { type ReadPathJson, useReadPathQuery } from "@/components/hooks/useReadPath";
import { ReadModelBanners } from "@/components/ReadModelBanners";
import { TimeRangePicker, useTimeRange } from "@/components/ui/TimeRange";
import { nearestHours } from "@/components/ui/timeRanges";
import { duration, ms, percent, relative, utc } from "@/lib/dashboard/format";
import styles from "./readPath.module.css";

/** The windows /api/read-path answers for: builds are folded one by one, a day at most. */
const WINDOWS = [1, 6, 24];

export function ReadPathPage() {
  const range = useTimeRange();
  const hours = nearestHours(range, WINDOWS);
  const { data, error } = useReadPathQuery({ hours });
  const r = data?.readPath;
  return (
    <>
      <h1>Read path</h1>
      <p className="lede">
        The model public readers are served (GET /api/news, /news): its version and age, how long
        stories take from fetch to readers, its builds over time, and the cache as this process sees
        it. Refreshed every 5 seconds.
      </p>
      <TimeRangePicker
        note={range === "7d" ? "Builds are drawn over a day at most: the last 24 h." : undefined}
      />
      {error ? <p className={styles.error}>Read path unavailable: {error.message}</p> : null}
      {r ? <Body r={r} /> : !error ? <p>Loading…</p> : null}
    </>
  );
}

function Body({ r }: { r: ReadPathJson }) {
  const s = r.summary;
  const head = s.head;
  const short = s.lag.lastFiveMinutes;
  const hour = s.lag.lastHour;
  return (
    <>
      <ReadModelBanners banners={s.banners} />
      <dl className={styles.facts} data-testid="read-model">
        <div className={styles.fact} data-fact="version">
          <dt>Model version</dt>
          <dd>{head ? head.version : "none yet"}</dd>
        </div>
        <div className={styles.fact} data-fact="age">
          <dt>Age</dt>
          <dd title={utc(head?.finishedAt)}>{head ? duration(head.ageSeconds) : "–"}</dd>
          <small>
            {s.pending.stories > 0
              ? `${s.pending.stories} changed ${s.pending.stories === 1 ? "story waits" : "stories wait"} for the next build`
              : "every change is built"}
          </small>
        </div>
        <div className={styles.fact} data-fact="build">
          <dt>Last build</dt>
          <dd>{head ? ms(head.buildMs) : "–"}</dd>
          {head ? (
            <small>
              {head.changed} changed of {head.stories} stories · {head.payloads} payloads,{" "}
              {(head.bytes / 1024).toFixed(0)} KiB · every {s.intervalMs / 1000} s when stories
              change
            </small>
          ) : null}
        </div>
        <div className={styles.fact} data-fact="store">
          <dt>Store (this process)</dt>
          <dd>
            {s.store
              ? s.store.kind === "redis"
                ? "Redis"
                : s.store.fallback
                  ? "In process (Redis down)"
                  : "In process"
              : "not chosen yet"}
          </dd>
          {s.store ? <small>since {relative(s.store.at, s.now)}</small> : null}
        </div>
        <div className={styles.fact} data-fact="lag">
          <dt>Fetch → readers, last 5 min</dt>
          <dd>{short ? `${ms(short.p50Ms)} / ${ms(short.p99Ms)}` : "–"}</dd>
          <small>
            p50 / p99{short ? ` over ${short.stories} stories in ${short.builds} builds` : ""}
          </small>
        </div>
        <div className={styles.fact} data-fact="lag-hour">
          <dt>Last hour</dt>
          <dd>{hour ? `${ms(hour.p50Ms)} / ${ms(hour.p99Ms)}` : "–"}</dd>
          <small>p50 / p99{hour ? ` over ${hour.stories} stories` : ""}</small>
        </div>
      </dl>

      <h2>Builds over time</h2>
      <p className="lede">
        Per {Math.round(r.bucketSeconds / 60)}-minute bucket: the slowest and the mean build, and
        the lag from fetch to readers of the stories the bucket&apos;s builds made available (each
        build stores its p50 and p99; the bucket&apos;s figures mix them by changed stories).
      </p>
      <BuildCharts r={r} />

      <h2>Cache (this process)</h2>
      <Requests r={r} />
    </>
  );
}

function BuildCharts({ r }: { r: ReadPathJson }) {
  const built = r.builds.reduce((n, p) => n + p.builds, 0);
  const failed = r.builds.reduce((n, p) => n + p.failed, 0);
  if (built + failed === 0) return <p className="empty">No build in the last {r.hours} h.</p>;
  const lagInSeconds = Math.max(...r.builds.map((p) => p.lagP99Ms ?? 0)) >= 10_000;
  const lagScale = lagInSeconds ? 1000 : 1;
  return (
    <div className={styles.charts}>
      <section className={styles.panel} data-chart="build-duration">
        <h3>
          Build duration · {built} builds{failed ? `, ${failed} failed` : ""}
        </h3>
        <TimeSeriesChart
          data={r.builds.map(
            (p): SeriesPoint => ({ t: p.t, max: p.buildMaxMs, mean: p.buildMeanMs }),
          )}
          series={[
            { field: "mean", name: "mean" },
            { field: "max", name: "slowest" },
          ]}
          unit=" ms"
          sparse
          label="Read model build duration over time, mean and slowest per bucket"
        />
      </section>
      <section className={styles.panel} data-chart="build-lag">
        <h3>Fetch → readers p50 / p99</h3>
        <TimeSeriesChart
          data={r.builds.map(
            (p): SeriesPoint => ({
              t: p.t,
              p50: p.lagP50Ms === null ? null : p.lagP50Ms / lagScale,
              p99: p.lagP99Ms === null ? null : p.lagP99Ms / lagScale,
            }),
          )}
          series={[
            { field: "p50", name: "p50" },
            { field: "p99", name: "p99" },
          ]}
          unit={lagInSeconds ? " s" : " ms"}
          sparse
          label="Lag from fetch to the read model over time, p50 and p99 per bucket"
        />
      </section>
    </div>
  );
}

const OUTCOMES = [
  ["hit", "from the store"],
  ["not_modified", "304, ETag matched"],
  ["miss", "built on request"],
  ["stale", "last payload, store or build failing"],
  ["error", "503, nothing to serve"],
  ["not_found", "no such story or cursor"],
  ["rate_limited", "429"],
] as const;

function Requests({ r }: { r: ReadPathJson }) {
  const q = r.requests;
  return (
    <>
      <p className="lede">
        Counted by this process since it started {relative(q.since, r.summary.now)}: with several
        app instances each counts its own (Prometheus sums them: wirewatch_read_requests_total). Hit
        ratio = (hit + 304) / (hit + 304 + miss + stale + error).
      </p>
      <dl className={styles.facts} data-testid="read-requests">
        <div className={styles.fact} data-fact="hit-ratio">
          <dt>Cache hit ratio</dt>
          <dd>{percent(q.hitRatio)}</dd>
          <small>{q.total.toLocaleString("en-GB")} requests</small>
        </div>
        <div className={styles.fact} data-fact="ttfb">
          <dt>Time to first byte p50 / p99</dt>
          <dd>{q.ttfbP50Ms === null ? "–" : `${fine(q.ttfbP50Ms)} / ${fine(q.ttfbP99Ms ?? 0)}`}</dd>
          <small>from the handler&apos;s start, bucketed as the metric</small>
        </div>
      </dl>
      <table className="sources" data-testid="read-outcomes">
        <thead>
          <tr>
            <th scope="col">Outcome</th>
            <th scope="col">Meaning</th>
            <th scope="col" className="num">
              Requests
            </th>
          </tr>
        </thead>
        <tbody>
          {OUTCOMES.map(([outcome, meaning]) => (
            <tr key={outcome} data-outcome={outcome}>
              <td>{outcome.replace("_", " ")}</td>
              <td>{meaning}</td>
              <td className="num">{q.counts[outcome].toLocaleString("en-GB")}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}

/** Sub-millisecond times keep a decimal: most hits answer in well under 1 ms. */
const fine = (value: number) => (value < 10 ? `${value.toFixed(1)} ms` : ms(value));
