"use client";

import Link from "next/link";
import { Sparkline } from "@/components/charts";
import { type SourceRowJson, useSourcesQuery } from "@/components/hooks/useSources";
import { useRangeHref } from "@/components/ui/TimeRange";
import { duration, percent, relative, utc } from "@/lib/dashboard/format";
import { AddSource } from "./AddSource";
import { OpmlImport } from "./OpmlImport";
import styles from "./sources.module.css";

export function SourcesPage() {
  const { data, error } = useSourcesQuery();
  const now = data ? Date.now() : 0;
  return (
    <>
      <h1>Sources</h1>
      <p className="lede">
        Health with the times behind it, the circuit breaker, error and 304 rates over the last hour
        (lines: counts per 5 minutes), whether the source&apos;s validators are trusted, and the
        next poll. Refreshed every 5 seconds. Sources from the sources file are read-only here (the
        file stays their source of truth); sources added here can be edited and removed.
      </p>
      <details className={styles.manageBox}>
        <summary>Add a source</summary>
        <AddSource />
      </details>
      <details className={styles.manageBox}>
        <summary>Import or export OPML</summary>
        <OpmlImport />
      </details>
      {error ? <p className={styles.error}>Sources unavailable: {error.message}</p> : null}
      {data && data.sources.length === 0 ? (
        <p className="empty">No sources configured yet.</p>
      ) : null}
      {data && data.sources.length > 0 ? (
        <div className={styles.scroll}>
          <table className={`sources ${styles.table}`}>
            <thead>
              <tr>
                <th scope="col">Source</th>
                <th scope="col">Health</th>
                <th scope="col">Activity / content</th>
                <th scope="col">Breaker</th>
                <th scope="col">Errors (1 h)</th>
                <th scope="col">304 (1 h)</th>
                <th scope="col">Validators</th>
                <th scope="col">Next poll</th>
              </tr>
            </thead>
            <tbody>
              {data.sources.map((s) => (
                <Row key={s.id} s={s} now={now} />
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
    </>
  );
}

function Row({ s, now }: { s: SourceRowJson; now: number }) {
  const withRange = useRangeHref();
  return (
    <tr
      data-source-id={s.id}
      data-health={s.health.state}
      data-breaker={s.breaker.state}
      data-origin={s.configOrigin}
      data-removed={s.removed}
    >
      <td className="source">
        <Link href={withRange(`/sources/${encodeURIComponent(s.id)}`)} className={styles.name}>
          {s.name}
        </Link>
        <div className={styles.sub}>
          {s.id} · {s.kind}
          <span
            className={styles.origin}
            title={
              s.configOrigin === "file"
                ? "From the sources file: read-only here, change it in the file"
                : "Added in the dashboard: can be edited and removed"
            }
          >
            {s.configOrigin === "file" ? "file · read-only" : "dashboard"}
          </span>
        </div>
      </td>
      <td className={styles.health}>
        <span className={`badge health-${s.health.state}`}>
          {s.removed ? "removed" : s.paused ? "paused" : s.health.state}
        </span>
        <div className={styles.sub}>{s.health.reason}</div>
      </td>
      <td className={`${styles.sub} ${styles.activity}`}>
        {s.collectors.length === 0 ? "no collector has reported yet" : null}
        {s.collectors.map((c) => (
          <div key={c.collector}>
            <strong>{c.collector}</strong>: activity{" "}
            <span title={utc(c.lastActivityAt)}>{relative(c.lastActivityAt, now)}</span>
            {c.lastActivityKind ? ` (${c.lastActivityKind})` : ""}, content{" "}
            <span title={utc(c.lastContentAt)}>{relative(c.lastContentAt, now)}</span>, usual gap{" "}
            {c.usualGapSeconds === null
              ? "not learned"
              : `${duration(c.usualGapSeconds)}${c.gapsSeen < 5 ? " (learning)" : ""}`}
          </div>
        ))}
      </td>
      <td>
        <span className={`${styles.breaker} ${styles[s.breaker.state] ?? ""}`}>
          {s.breaker.state.replace("_", "-")}
        </span>
        {s.breaker.state !== "closed" ? (
          <div className={styles.sub}>
            since <span title={utc(s.breaker.since)}>{relative(s.breaker.since, now)}</span>
            {s.breaker.nextProbeAt ? (
              <>
                , probe{" "}
                <span title={utc(s.breaker.nextProbeAt)}>
                  {relative(s.breaker.nextProbeAt, now)}
                </span>
              </>
            ) : null}
            {s.lastError ? (
              <div title={s.lastError.message ?? undefined}>{s.lastError.code}</div>
            ) : null}
          </div>
        ) : s.breaker.failures > 0 ? (
          <div className={styles.sub}>{s.breaker.failures} failure(s) in a row</div>
        ) : null}
      </td>
      <td>
        <div>
          <span className={styles.num}>{percent(s.lastHour.errorRate)}</span>
          <Sparkline
            data={s.series}
            field="errors"
            color="#dc2626"
            label={`${s.name}: failed fetches per 5 minutes, last hour`}
          />
        </div>
        <div className={styles.sub}>
          {s.lastHour.errors} of {s.lastHour.attempts}
        </div>
      </td>
      <td>
        <div>
          <span className={styles.num}>{percent(s.lastHour.notModifiedRate)}</span>
          <Sparkline
            data={s.series}
            field="notModified"
            label={`${s.name}: 304 answers per 5 minutes, last hour`}
          />
        </div>
        <div className={styles.sub}>
          {s.lastHour.notModified} of {s.lastHour.attempts}
        </div>
      </td>
      <td>
        {s.kind === "stream" || s.kind === "story-api" ? (
          <span className={styles.sub}>–</span>
        ) : s.trustsValidators ? (
          "trusted"
        ) : (
          <span title="An unconditional fetch showed a 304 hiding a change">not trusted</span>
        )}
      </td>
      <td>
        {s.paused ? (
          <span className={styles.sub}>paused</span>
        ) : s.kind === "stream" ? (
          <span className={styles.sub}>watched</span>
        ) : (
          <span title={utc(s.nextPollAt)}>
            {s.kind === "story-api" && s.nextPollAt ? "catch-up " : ""}
            {relative(s.nextPollAt, now)}
          </span>
        )}
      </td>
    </tr>
  );
}
