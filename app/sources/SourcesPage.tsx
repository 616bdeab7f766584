"use client";

import Link from "next/link";
import { useEffect, useState } from "react";
import { Sparkline } from "@/components/charts";
import ui from "@/components/dashboard.module.css";
import { type SourceRowJson, useSourcesQuery } from "@/components/hooks/useSources";
import { Pager, usePages } from "@/components/ui/Pager";
import { useRangeHref } from "@/components/ui/TimeRange";
import { duration, percent, relative, utc } from "@/lib/dashboard/format";
import type { SourceSort } from "@/lib/dashboard/sourceList";
import { AddSource } from "./AddSource";
import { OpmlImport } from "./OpmlImport";
import styles from "./sources.module.css";

const HEALTH_FILTERS = ["healthy", "quiet", "silent", "starting", "stalled", "failing", "disabled"];
const KINDS = ["feed", "stream", "page", "backfill", "story-api"];
const BREAKERS: [string, string][] = [
  ["closed", "closed"],
  ["open", "open"],
  ["half_open", "half-open"],
];
const SORTS: [SourceSort, string][] = [
  ["name", "Name"],
  ["health", "Health"],
  ["errorRate", "Error rate (1 h)"],
  ["lastPolled", "Last polled"],
];

/** Waits for typing to pause: one request per pause, not per keystroke. */
function useDebounced<T>(value: T, ms: number): T {
  const [settled, setSettled] = useState(value);
  useEffect(() => {
    const t = setTimeout(() => setSettled(value), ms);
    return () => clearTimeout(t);
  }, [value, ms]);
  return settled;
}

export function SourcesPage() {
  const [text, setText] = useState("");
  const [kind, setKind] = useState("");
  const [health, setHealth] = useState("");
  const [breaker, setBreaker] = useState("");
  const [sort, setSort] = useState<SourceSort>("name");
  const [dir, setDir] = useState<"asc" | "desc">("asc");
  const q = useDebounced(text.trim(), 300);
  const pages = usePages();
  const { data, error, isFetching } = useSourcesQuery({
    q,
    kind,
    health,
    breaker,
    sort,
    dir,
    cursor: pages.cursor,
  });
  // Another filter or order starts at its first page: a cursor belongs to one ordering.
  // biome-ignore lint/correctness/useExhaustiveDependencies: reset when the query changes
  useEffect(() => pages.reset(), [q, kind, health, breaker, sort, dir]);
  const filtered = Boolean(q || kind || health || breaker);
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
      <form
        className={`${ui.search} ${styles.controls}`}
        aria-label="Filter and sort sources"
        onSubmit={(e) => e.preventDefault()}
      >
        <label>
          Name, id or URL
          <input
            type="search"
            name="q"
            value={text}
            onChange={(e) => setText(e.target.value)}
            placeholder="e.g. reuters"
          />
        </label>
        <Choice label="Health" name="health" value={health} onChange={setHealth}>
          {HEALTH_FILTERS.map((h) => [h, h])}
        </Choice>
        <Choice label="Breaker" name="breaker" value={breaker} onChange={setBreaker}>
          {BREAKERS}
        </Choice>
        <Choice label="Kind" name="kind" value={kind} onChange={setKind}>
          {KINDS.map((k) => [k, k])}
        </Choice>
        <label>
          Sort by
          <select name="sort" value={sort} onChange={(e) => setSort(e.target.value as SourceSort)}>
            {SORTS.map(([value, label]) => (
              <option key={value} value={value}>
                {label}
              </option>
            ))}
          </select>
        </label>
        <label>
          Order
          <select
            name="dir"
            value={dir}
            onChange={(e) => setDir(e.target.value === "desc" ? "desc" : "asc")}
          >
            <option value="asc">{sort === "name" ? "A to Z" : "lowest first"}</option>
            <option value="desc">{sort === "name" ? "Z to A" : "highest first"}</option>
          </select>
        </label>
        <span className={styles.sub} aria-live="polite">
          {isFetching ? "loading…" : ""}
        </span>
      </form>
      {error ? <p className={styles.error}>Sources unavailable: {error.message}</p> : null}
      {data && data.sources.length === 0 ? (
        <p className="empty">
          {filtered ? "No source matches these filters." : "No sources configured yet."}
        </p>
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
      <Pager pages={pages} next={data?.nextCursor} backLabel="← Previous" nextLabel="Next →">
        <span className={styles.sub}>
          Page {pages.depth + 1}
          {data ? `, ${data.sources.length} source${data.sources.length === 1 ? "" : "s"}` : ""}
        </span>
      </Pager>
    </>
  );
}

/** A filter's select: "any" (no filter) and its values as [value, label]. */
function Choice({
  label,
  name,
  value,
  onChange,
  children,
}: {
  label: string;
  name: string;
  value: string;
  onChange: (value: string) => void;
  children: [string, string][];
}) {
  return (
    <label>
      {label}
      <select name={name} value={value} onChange={(e) => onChange(e.target.value)}>
        <option value="">any</option>
        {children.map(([v, l]) => (
          <option key={v} value={v}>
            {l}
          </option>
        ))}
      </select>
    </label>
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
