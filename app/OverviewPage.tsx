"use client";

import Link from "next/link";
import type { ReactNode } from "react";
import { Sparkline } from "@/components/charts";
import {
  type OverviewJson,
  useHeadlinesQuery,
  useOverviewQuery,
} from "@/components/hooks/useOverview";
import { useSourcesQuery } from "@/components/hooks/useSources";
import { ReadModelBanners } from "@/components/ReadModelBanners";
import { useRangeHref } from "@/components/ui/TimeRange";
import { duration, ms, percent, relative, usd, utc } from "@/lib/dashboard/format";
import { NewsTable } from "./NewsTable";
import styles from "./overview.module.css";

type Level = OverviewJson["status"];

const STATUS_TEXT: Record<Level, string> = {
  ok: "All clear",
  amber: "Needs attention",
  red: "Alert",
};

export function OverviewPage() {
  const { data, error } = useOverviewQuery();
  const withRange = useRangeHref();
  const o = data?.overview;
  return (
    <>
      <div className={styles.heading}>
        <h1>Overview</h1>
        {o ? (
          <span
            className={`${styles.status} ${styles[o.status]}`}
            data-status={o.status}
            role="status"
          >
            {STATUS_TEXT[o.status]}
          </span>
        ) : null}
      </div>
      <p className="lede">
        Judged on the last 5 minutes, with the hour beside it; refreshed every 5 seconds. Each tile
        opens its page.
      </p>
      {error ? <p className={styles.error}>Overview unavailable: {error.message}</p> : null}
      {o?.ingestion.reason ? (
        <p className="banner ingestion" role="alert" data-banner="ingestion">
          Ingestion is not running: {o.ingestion.reason}
        </p>
      ) : null}
      {o?.outage ? (
        <p className="banner outage" role="alert">
          Local network outage since {utc(o.outage.since)} ({relative(o.outage.since, o.now)}):{" "}
          {o.outage.failingHosts} of {o.outage.totalHosts} hosts failing at once. Our network, not
          the sources: breakers are frozen and no source is disabled until it ends.
        </p>
      ) : null}
      {o?.extraction.budgets
        .filter((b) => b.exhausted)
        .map((b) => (
          <p
            key={b.provider}
            className={styles.budgetBanner}
            role="alert"
            data-banner="budget"
            data-provider={b.provider}
          >
            Extraction&apos;s <strong>{b.provider}</strong> provider is stopped at its daily budget
            ({usd(b.spentUsd)} spent of {usd(b.budgetUsd)} today): the providers after it in the
            chain answer until midnight UTC. <Link href={withRange("/costs")}>Costs →</Link>
          </p>
        ))}
      {o ? <ReadModelBanners banners={o.readModel.banners} link /> : null}
      {o ? <Tiles o={o} /> : !error ? <p className={styles.loading}>Loading…</p> : null}
      <SourcesHealth />
      <Headlines />
    </>
  );
}

function Tiles({ o }: { o: OverviewJson }) {
  const t = o.thresholds;
  const healthy = o.health.byState.healthy + o.health.byState.quiet;
  const readerLag = o.lag.readModel.lastFiveMinutes;
  const readerHour = o.lag.readModel.lastHour;
  const head = o.readModel.head;
  return (
    <div className={styles.tiles}>
      <Tile
        name="ingest"
        href="/items"
        title="Ingest rate"
        level={o.ingest.level}
        value={`${o.ingest.perMinute}/min`}
        note={`${o.ingest.lastFiveMinutes} in the last 5 min · ${o.ingest.lastHour} in the last hour`}
      >
        <Sparkline
          data={o.ingest.series}
          field="count"
          label="Observations per minute, last hour"
        />
      </Tile>
      <Tile
        name="lag"
        href="/queues"
        title="Lag fetch → readers p99"
        level={o.lag.level}
        value={readerLag ? ms(readerLag.p99Ms) : "–"}
        note={`${
          readerLag
            ? `p50 ${ms(readerLag.p50Ms)} over ${readerLag.stories} stories in 5 min`
            : "no story reached the read model in 5 min"
        }${
          readerHour ? ` · hour p50 ${ms(readerHour.p50Ms)}, p99 ${ms(readerHour.p99Ms)}` : ""
        } · stages: ${
          o.lag.stages.length
            ? o.lag.stages.map((s) => `${s.queue} p99 ${ms(s.p99Ms)}`).join(", ")
            : "no claims in the last hour"
        }`}
        threshold={`amber ≥ ${t.ALERT_LAG_P99_AMBER_SECONDS} s, red ≥ ${t.ALERT_LAG_P99_RED_SECONDS} s (readers or any stage)`}
      />
      <Tile
        name="readmodel"
        href="/read-path"
        title="Read model"
        level={o.readModel.level}
        value={head ? `v${head.version}` : "none yet"}
        note={`${
          head
            ? `built ${duration(head.ageSeconds)} ago in ${ms(head.buildMs)}`
            : "no build has finished"
        } · store: ${
          o.readModel.store
            ? o.readModel.store.kind === "redis"
              ? "Redis"
              : o.readModel.store.fallback
                ? "in process (Redis down)"
                : "in process"
            : "not chosen yet"
        }`}
        threshold="red when changes wait 5 build intervals, amber on Redis fallback or a failed build"
      />
      <Tile
        name="dlq"
        href="/dead-letters"
        title="Dead letters"
        level={o.deadLetters.level}
        value={String(o.deadLetters.total)}
        note={
          o.deadLetters.byQueue.length
            ? o.deadLetters.byQueue.map((q) => `${q.queue}: ${q.count}`).join(", ")
            : "none"
        }
        threshold={`amber ≥ ${t.ALERT_DLQ_AMBER}, red ≥ ${t.ALERT_DLQ_RED}`}
      />
      <Tile
        name="breakers"
        href="/sources"
        title="Open breakers"
        level={o.breakers.level}
        value={String(o.breakers.open + o.breakers.halfOpen)}
        note={
          o.breakers.sources.length
            ? o.breakers.sources.join(", ")
            : "every source's breaker is closed"
        }
        threshold={o.breakers.halfOpen ? `${o.breakers.halfOpen} half-open (probing)` : undefined}
      />
      <Tile
        name="errors"
        href="/sources"
        title="Fetch errors"
        level={o.fetches.level}
        value={percent(o.fetches.errorRate)}
        note={`last 5 min: ${o.fetches.errors} of ${o.fetches.attempts} failed, 304: ${percent(o.fetches.notModifiedRate)} · last hour: ${percent(o.fetches.lastHour.errorRate)} failed`}
        threshold={`amber ≥ ${percent(t.ALERT_ERROR_RATE_AMBER)}, red ≥ ${percent(t.ALERT_ERROR_RATE_RED)}`}
      />
      <Tile
        name="health"
        href="/sources"
        title="Sources"
        level={o.health.level}
        value={`${healthy} of ${o.health.total} fine`}
        note={
          Object.entries(o.health.byState)
            .filter(([, n]) => n > 0)
            .map(([state, n]) => `${n} ${state}`)
            .join(", ") || "no sources"
        }
      />
      <Tile
        name="extraction"
        href="/costs"
        title="Extraction today"
        level={o.extraction.level}
        value={usd(o.extraction.todayUsd)}
        note={
          o.extraction.budgets.length
            ? o.extraction.budgets
                .map(
                  (b) =>
                    `${b.provider}: ${usd(b.spentUsd)}${b.budgetUsd === null ? "" : ` of ${usd(b.budgetUsd)}`}${b.exhausted ? ", stopped at its budget" : ""}`,
                )
                .join("; ")
            : `${o.extraction.todayCalls.toLocaleString("en-GB")} calls, none to a paid provider`
        }
        threshold="amber while a paid provider is stopped at its daily budget"
      />
    </div>
  );
}

function Tile({
  name,
  href,
  title,
  level,
  value,
  note,
  threshold,
  children,
}: {
  name: string;
  href: string;
  title: string;
  level: Level;
  value: string;
  note: string;
  threshold?: string;
  children?: ReactNode;
}) {
  // A range picked on another page stays picked through the overview's tiles.
  const withRange = useRangeHref();
  return (
    <Link
      href={withRange(href)}
      className={`${styles.tile} ${styles[level]}`}
      data-tile={name}
      data-level={level}
    >
      <span className={styles.tileTitle}>{title}</span>
      <span className={styles.tileValue}>{value}</span>
      <span className={styles.tileNote}>{note}</span>
      {children}
      {threshold ? <span className={styles.tileThreshold}>{threshold}</span> : null}
    </Link>
  );
}

/** Every source's health in one line each; the Sources page has the times behind them. */
const WORST_SOURCES = 20;

function SourcesHealth() {
  // The worst first and at most a screenful: a deployment may watch 100,000 sources.
  const { data, error } = useSourcesQuery({ sort: "health", dir: "desc", limit: WORST_SOURCES });
  const withRange = useRangeHref();
  return (
    <section aria-labelledby="sources-heading">
      <h2 id="sources-heading">Sources, worst health first</h2>
      <p className="lede">
        Connection activity and news arrival, apart: quiet is a slow news spell, stalled a dead
        connection, starting a source whose collector has not reported yet.{" "}
        {data?.nextCursor ? (
          <Link href={withRange("/sources")}>
            The first {WORST_SOURCES} are shown; all sources →
          </Link>
        ) : null}
      </p>
      {error ? <p className={styles.error}>Sources unavailable: {error.message}</p> : null}
      {data && data.sources.length === 0 ? (
        <p className="empty">No sources configured yet.</p>
      ) : null}
      {data && data.sources.length > 0 ? (
        <table className="sources">
          <thead>
            <tr>
              <th scope="col">Source</th>
              <th scope="col">Kind</th>
              <th scope="col">Health</th>
              <th scope="col">Why</th>
              <th scope="col">Breaker</th>
              <th scope="col" className="num" title="Fetch errors in the last hour">
                Errors
              </th>
              <th scope="col" className="num" title="304 Not Modified share in the last hour">
                304
              </th>
            </tr>
          </thead>
          <tbody>
            {data.sources.map((s) => (
              <tr key={s.id} data-source-id={s.id}>
                <td className="source" title={s.id}>
                  <Link href={withRange(`/sources/${encodeURIComponent(s.id)}`)}>{s.name}</Link>
                </td>
                <td>{s.kind}</td>
                <td>
                  <span className={`badge health-${s.health.state}`}>{s.health.state}</span>
                </td>
                <td className="reason">{s.health.reason}</td>
                <td>{s.breaker.state.replace("_", "-")}</td>
                <td className="num">{percent(s.lastHour.errorRate)}</td>
                <td className="num">{percent(s.lastHour.notModifiedRate)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
    </section>
  );
}

function Headlines() {
  const { data, error } = useHeadlinesQuery();
  return (
    <section aria-labelledby="headlines-heading">
      <h2 id="headlines-heading">Latest headlines</h2>
      <p className="lede">The most recently updated items, newest first.</p>
      {error ? <p className={styles.error}>Headlines unavailable: {error.message}</p> : null}
      {data ? <NewsTable rows={data.rows} /> : null}
    </section>
  );
}
