"use client";

import Link from "next/link";
import { BarsChart, TimeSeriesChart } from "@/components/charts";
import { ApiError } from "@/components/hooks/api";
import {
  type SourceAction,
  type SourceDetailJson,
  useSourceActionMutation,
  useSourceQuery,
} from "@/components/hooks/useSource";
import { TimeRangePicker, useChosenTimeRange, useRangeHref } from "@/components/ui/TimeRange";
import { RANGE_HOURS, RANGE_LABELS, TIME_RANGES } from "@/components/ui/timeRanges";
import { duration, ms, percent, relative, utc } from "@/lib/dashboard/format";
import styles from "../sources.module.css";
import { ManageSource } from "./ManageSource";
import { PageReading } from "./PageReading";

export function SourcePage({ id }: { id: string }) {
  // Until a range is picked, the API's own windows: attempts over the hour, codes over the day.
  const range = useChosenTimeRange() ?? undefined;
  const withRange = useRangeHref();
  const { data, error } = useSourceQuery(id, { range });
  const s = data?.source;
  if (error) {
    return (
      <>
        <p>
          <Link href={withRange("/sources")}>← Sources</Link>
        </p>
        <p className={styles.error}>
          {error instanceof ApiError && error.status === 404
            ? `No source "${id}".`
            : `Source unavailable: ${error.message}`}
        </p>
      </>
    );
  }
  if (!s) return <p>Loading…</p>;
  const now = Date.now();
  return (
    <>
      <p>
        <Link href={withRange("/sources")}>← Sources</Link>
      </p>
      <h1>{s.name}</h1>
      <p className="lede">
        <span
          className={`badge health-${s.health.state}`}
          data-testid="health"
          data-health={s.health.state}
        >
          {s.removed ? "removed" : s.paused ? "paused" : s.health.state}
        </span>{" "}
        {s.health.reason}
      </p>
      <Actions s={s} />
      <dl className={styles.facts}>
        <Fact label="Id">{s.id}</Fact>
        <Fact label="Kind">
          {s.kind} ({s.configOrigin === "file" ? "sources file" : "dashboard"})
        </Fact>
        <Fact label="URL">{s.url ?? "–"}</Fact>
        <Fact label="Breaker">
          <span data-testid="breaker" data-breaker={s.breaker.state}>
            {s.breaker.state.replace("_", "-")}
          </span>
          {s.breaker.state !== "closed" ? (
            <>
              {" "}
              since <span title={utc(s.breaker.since)}>{relative(s.breaker.since, now)}</span>
              {s.breaker.nextProbeAt
                ? `, next probe ${relative(s.breaker.nextProbeAt, now)}`
                : null}
            </>
          ) : null}
          {s.breaker.outlook ? (
            <span data-testid="breaker-outlook"> · {s.breaker.outlook}</span>
          ) : s.breaker.failures ? (
            ` · ${s.breaker.failures} failure(s) in a row`
          ) : null}
        </Fact>
        <Fact label="Last error">
          {s.lastError ? (
            <>
              {s.lastError.code} {relative(s.lastError.at, now)}
              <div className={styles.sub}>{s.lastError.message}</div>
            </>
          ) : (
            "none"
          )}
        </Fact>
        <Fact label="Last hour">
          {s.lastHour.attempts} fetches, {percent(s.lastHour.errorRate)} errors,{" "}
          {percent(s.lastHour.notModifiedRate)} 304
        </Fact>
        <Fact label="Polling">
          {s.removed
            ? "none: removed"
            : s.paused
              ? `paused (every ${duration(s.pollIntervalSeconds)} when resumed)`
              : s.kind === "stream"
                ? "watched (stream)"
                : `every ${duration(s.pollIntervalSeconds)}, next ${relative(s.nextPollAt, now)}, last ${relative(s.lastPolledAt, now)}`}
          {s.pollingNote && !s.paused ? (
            <div className={styles.sub} data-testid="polling-note">
              {s.pollingNote}
            </div>
          ) : null}
        </Fact>
        {s.entriesLeftOut ? (
          <Fact label="Entries left out">
            <span data-testid="entries-left-out">
              {s.entriesLeftOut.count.toLocaleString("en")} of{" "}
              {(s.entriesLeftOut.of ?? 0).toLocaleString("en")} entries in the latest document (more
              than FEED_MAX_ENTRIES), {relative(s.entriesLeftOut.at, now)}
            </span>
          </Fact>
        ) : null}
        <Fact label="Validators">{s.trustsValidators ? "trusted" : "not trusted"}</Fact>
        {s.observes ? <Fact label="Observes">{s.observes}</Fact> : null}
        {s.websub && s.websub.state !== "no_hub" ? (
          <Fact label="WebSub">
            <span data-testid="websub" data-websub={s.websub.state}>
              {s.websub.state}
            </span>
            {s.websub.state === "active"
              ? ` · ${s.websub.pushes} push(es), last ${relative(s.websub.lastPushAt, now)}, lease until ${relative(s.websub.expiresAt, now)}`
              : null}
            {s.websub.hub ? <div className={styles.sub}>hub {s.websub.hub}</div> : null}
            {s.websub.rejectedPushes ? (
              <div className={styles.sub}>
                {s.websub.rejectedPushes} push(es) refused, last: {s.websub.lastRejection}
              </div>
            ) : null}
            {s.websub.lastError && s.websub.state !== "active" ? (
              <div className={styles.sub}>{s.websub.lastError}</div>
            ) : null}
          </Fact>
        ) : null}
      </dl>

      <h2>Settings</h2>
      <ManageSource id={s.id} />

      <h2>Fetching</h2>
      <TimeRangePicker />
      <FetchingCharts s={s} />
      {s.reading ? (
        <PageReading
          sourceId={s.id}
          reading={s.reading}
          editable={s.configOrigin !== "file" && !s.removed}
        />
      ) : null}

      <h2>Collectors</h2>
      {s.collectors.length === 0 ? (
        <p className="empty">No collector has reported yet.</p>
      ) : (
        <table className="sources">
          <thead>
            <tr>
              <th scope="col">Collector</th>
              <th scope="col">State</th>
              <th scope="col">Connected</th>
              <th scope="col">Last activity</th>
              <th scope="col">Last content</th>
              <th scope="col">Usual gap</th>
            </tr>
          </thead>
          <tbody>
            {s.collectors.map((c) => (
              <tr key={c.collector}>
                <td>{c.collector}</td>
                <td>
                  <span className={`badge health-${c.state}`}>{c.state}</span>
                  <div className={styles.sub}>{c.reason}</div>
                </td>
                <td>{c.connected ? "yes" : "no"}</td>
                <td title={utc(c.lastActivityAt)}>
                  {relative(c.lastActivityAt, now)}
                  {c.lastActivityKind ? ` (${c.lastActivityKind})` : ""}
                </td>
                <td title={utc(c.lastContentAt)}>{relative(c.lastContentAt, now)}</td>
                <td>
                  {c.usualGapSeconds === null ? "not learned" : duration(c.usualGapSeconds)} (
                  {c.gapsSeen} gaps seen)
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}

      <h2>Jobs</h2>
      {s.jobs.length === 0 ? (
        <p className="empty">No job in the frontier{s.paused ? " (paused)" : ""}.</p>
      ) : (
        <table className="sources" data-testid="jobs">
          <thead>
            <tr>
              <th scope="col">Queue</th>
              <th scope="col">Key</th>
              <th scope="col">State</th>
              <th scope="col">Due</th>
              <th scope="col" className="num">
                Attempts
              </th>
              <th scope="col">Lease</th>
            </tr>
          </thead>
          <tbody>
            {s.jobs.map((j) => (
              <tr key={j.id}>
                <td>{j.queue}</td>
                <td>{j.key}</td>
                <td>{j.state}</td>
                <td title={utc(j.runAt)}>{relative(j.runAt, now)}</td>
                <td className="num">{j.attempts}</td>
                <td>
                  {j.leaseOwner ? `${j.leaseOwner}, until ${relative(j.leaseExpiresAt, now)}` : "–"}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}

      <h2>Recent fetch attempts</h2>
      {s.recentAttempts.length === 0 ? (
        <p className="empty">No fetch attempts yet.</p>
      ) : (
        <table className="sources" data-testid="attempts">
          <thead>
            <tr>
              <th scope="col">When</th>
              <th scope="col">Collector</th>
              <th scope="col">Code</th>
              <th scope="col" className="num">
                HTTP
              </th>
              <th scope="col" className="num">
                Time
              </th>
              <th scope="col" className="num">
                Bytes
              </th>
              <th scope="col" className="num">
                Retry
              </th>
              <th scope="col">Message</th>
            </tr>
          </thead>
          <tbody>
            {s.recentAttempts.map((a) => (
              <tr key={a.id}>
                <td title={utc(a.startedAt)}>{relative(a.startedAt, now)}</td>
                <td>{a.collector}</td>
                <td>{a.code}</td>
                <td className="num">{a.httpStatus ?? "–"}</td>
                <td className="num">{ms(a.durationMs)}</td>
                <td className="num">{a.bytes}</td>
                <td className="num">{a.retry}</td>
                <td className={styles.sub}>{a.message ?? ""}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </>
  );
}

function Fact({ label, children }: { label: string; children: React.ReactNode }) {
  return (
    <div>
      <dt>{label}</dt>
      <dd>{children}</dd>
    </div>
  );
}

const LABELS: Record<SourceAction, string> = {
  "fetch-now": "Fetch now",
  pause: "Pause",
  resume: "Resume",
};

function Actions({ s }: { s: SourceDetailJson }) {
  const action = useSourceActionMutation(s.id);
  // A removed source is history: nothing to fetch, pause or resume.
  if (s.removed) return null;
  const toggle: SourceAction = s.paused ? "resume" : "pause";
  return (
    <div className={styles.actions}>
      {(["fetch-now", toggle] as const).map((a) => (
        <button
          key={a}
          type="button"
          className={styles.button}
          disabled={action.isPending || (a === "fetch-now" && s.paused)}
          onClick={() => action.mutate(a)}
        >
          {LABELS[a]}
        </button>
      ))}
      <span className={styles.sub}>Admin actions; each is recorded in the audit log.</span>
      {action.data ? (
        <span className={styles.message} role="status">
          {LABELS[action.variables ?? "fetch-now"]}: {action.data.result.message}
        </span>
      ) : null}
      {action.error ? (
        <span className={`${styles.message} ${styles.failed}`} role="alert">
          {LABELS[action.variables ?? "fetch-now"]} refused: {action.error.message}
        </span>
      ) : null}
    </div>
  );
}

/**
 * Attempts by outcome and outcomes by code, each heading naming the window of the answer shown:
 * while another range loads, the charts still say what they draw.
 */
function FetchingCharts({ s }: { s: SourceDetailJson }) {
  const { hours, bucketSeconds, series, codesHours } = s.fetching;
  return (
    <div className={styles.charts}>
      <section className={styles.panel}>
        <h3>
          Fetch attempts per {bucketWords(bucketSeconds)}, {lastHours(hours)}
        </h3>
        <TimeSeriesChart
          data={series.map((p) => ({
            t: p.t,
            ok: p.attempts - p.errors - p.notModified,
            notModified: p.notModified,
            errors: p.errors,
          }))}
          series={[
            { field: "ok", name: "200" },
            { field: "errors", name: "errors" },
            { field: "notModified", name: "304" },
          ]}
          label={`${s.name}: fetch attempts by outcome over the ${lastHours(hours)}`}
        />
      </section>
      <section className={styles.panel}>
        <h3>Outcomes by code, {lastHours(codesHours)}</h3>
        {s.codes.length ? (
          <BarsChart
            data={s.codes}
            x="code"
            y="count"
            label={`${s.name}: fetch outcomes by code over the ${lastHours(codesHours)}`}
          />
        ) : (
          <p className={styles.sub}>No fetches in the {lastHours(codesHours)}.</p>
        )}
      </section>
    </div>
  );
}

/** A window in the picker's words ("last 6 h"). */
function lastHours(hours: number): string {
  const range = TIME_RANGES.find((r) => RANGE_HOURS[r] === hours);
  return range ? RANGE_LABELS[range] : `last ${hours} h`;
}

/** A bucket's length as a heading says it: "5 minutes", "hour", "2 hours". */
function bucketWords(seconds: number): string {
  if (seconds % 3600 === 0) return seconds === 3600 ? "hour" : `${seconds / 3600} hours`;
  return `${seconds / 60} minutes`;
}
