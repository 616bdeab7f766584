"use client";

import Link from "next/link";
import { useState } from "react";
import { StackedBarsChart, TimeSeriesChart } from "@/components/charts";
import s from "@/components/dashboard.module.css";
import { useDedupClusters, useDedupOverview } from "@/components/hooks/useDedup";
import { Pager, usePages } from "@/components/ui/Pager";
import { TimeRangePicker, useTimeRange } from "@/components/ui/TimeRange";
import { nearestHours, RANGE_HOURS } from "@/components/ui/timeRanges";
import type { ClusterOrder, DedupOverview, WindowHours } from "@/lib/dashboard/dedup";
import { ms, percent, relative, when } from "@/lib/dashboard/format";
import own from "./dedup.module.css";
import { ReviewQueue } from "./ReviewQueue";
import { Thresholds } from "./Thresholds";

/** The kinds in cascade order, each with the colour it keeps on every plot. */
const KINDS = [
  { field: "url", name: "URL", color: "#2563eb" },
  { field: "exact", name: "Exact", color: "#16a34a" },
  { field: "near", name: "Near", color: "#d97706" },
  { field: "meaning", name: "Meaning", color: "#7c3aed" },
  { field: "review", name: "Review", color: "#dc2626" },
  { field: "unique", name: "Unique", color: "#9ca3af" },
] as const;

/** The windows /api/dedup/overview answers for. */
const WINDOW_CHOICES: WindowHours[] = [6, 24, 72];

export function DedupView() {
  const range = useTimeRange("24h");
  const hours = nearestHours(range, WINDOW_CHOICES) as WindowHours;
  const { data, error } = useDedupOverview(hours);
  return (
    <>
      <TimeRangePicker
        fallback="24h"
        note={
          <>
            {hours !== RANGE_HOURS[range]
              ? `Dedup is counted over 6, 24 or 72 h: showing ${hours} h. `
              : ""}
            {data
              ? `Last decision ${relative(data.lastDecisionAt, data.now)}; bars of ${data.bucketSeconds / 60} min.`
              : null}
          </>
        }
      />
      {error ? (
        <p className={s.error} role="alert">
          Dedup overview unavailable: {error.message}
        </p>
      ) : null}
      {data ? <Summary o={data} /> : !error ? <p>Loading…</p> : null}
      <Clusters />
      <ReviewQueue pending={data?.reviews.pending ?? null} />
      <Thresholds />
    </>
  );
}

function Summary({ o }: { o: DedupOverview }) {
  const t = o.decisions.totals;
  const duplicates = t.url + t.exact + t.near + t.meaning;
  const cheap = t.url + t.exact;
  return (
    <>
      <div className={own.tiles} data-testid="dedup-tiles">
        <div className={own.tile}>
          <strong>{o.decisions.decided}</strong>
          <span>decisions in {o.hours} h</span>
        </div>
        <div className={own.tile}>
          <strong>{percent(o.decisions.decided ? duplicates / o.decisions.decided : null)}</strong>
          <span>linked as duplicates</span>
        </div>
        <div className={own.tile}>
          <strong>{percent(duplicates ? cheap / duplicates : null)}</strong>
          <span>of duplicates settled by URL or exact text</span>
        </div>
        <div className={own.tile}>
          <strong>{o.clusters.live}</strong>
          <span>live clusters</span>
        </div>
        <div className={own.tile}>
          <strong data-testid="pending-reviews">{o.reviews.pending}</strong>
          <span>
            pairs waiting for review
            {o.reviews.oldestPendingAt
              ? `, oldest ${relative(o.reviews.oldestPendingAt, o.now)}`
              : ""}
          </span>
        </div>
        <div className={own.tile}>
          <strong>{ms(o.latency.p95)}</strong>
          <span>
            decision p95 (p50 {ms(o.latency.p50)}, p99 {ms(o.latency.p99)})
          </span>
        </div>
      </div>
      <div className={own.plots}>
        <section className={s.card} aria-label="Decisions by stage">
          <h2>Decisions by stage</h2>
          <StackedBarsChart
            data={o.decisions.buckets}
            series={KINDS.map((k) => ({ ...k }))}
            label={`Decisions per ${o.bucketSeconds / 60} minutes by the stage that settled them`}
          />
        </section>
        <section className={s.card} aria-label="Decision latency">
          <h2>Decision latency</h2>
          <TimeSeriesChart
            data={o.latency.buckets.map((b) => ({ t: b.t, p50: b.p50, p95: b.p95 }))}
            series={[
              { field: "p50", name: "p50" },
              { field: "p95", name: "p95" },
            ]}
            unit=" ms"
            sparse
            label="Decision time per item, p50 and p95, in milliseconds"
          />
        </section>
      </div>
      <h2>Duplicate rate per source</h2>
      <div className={own.scroll}>
        <table className={s.table} aria-label="Duplicate rate per source">
          <thead>
            <tr>
              <th>Source</th>
              <th className={s.num}>Last 24 h</th>
              <th className={s.num}>Duplicates</th>
              <th className={s.num}>All time</th>
              <th className={s.num}>Duplicates</th>
            </tr>
          </thead>
          <tbody>
            {o.sources.length === 0 ? (
              <tr>
                <td colSpan={5} className={s.muted}>
                  Nothing decided yet.
                </td>
              </tr>
            ) : (
              o.sources.map((r) => (
                <tr key={r.sourceId} data-source={r.sourceId}>
                  <td>
                    <Link href={`/sources/${encodeURIComponent(r.sourceId)}`}>
                      {r.sourceName ?? r.sourceId}
                    </Link>
                  </td>
                  <td className={s.num}>{r.decidedDay}</td>
                  <td className={s.num}>
                    {percent(r.decidedDay ? r.duplicatesDay / r.decidedDay : null)}
                  </td>
                  <td className={s.num}>{r.decided}</td>
                  <td className={s.num}>{percent(r.decided ? r.duplicates / r.decided : null)}</td>
                </tr>
              ))
            )}
          </tbody>
        </table>
      </div>
    </>
  );
}

function Clusters() {
  const [order, setOrder] = useState<ClusterOrder>("largest");
  const pages = usePages();
  const { data, error } = useDedupClusters(order, pages.cursor);
  const choose = (o: ClusterOrder) => {
    setOrder(o);
    pages.reset();
  };
  return (
    <section aria-label="Clusters">
      <h2>Clusters</h2>
      <fieldset className={own.toolbar} aria-label="Cluster order">
        {(["largest", "newest"] as const).map((o) => (
          <button
            key={o}
            type="button"
            className={`${s.button} ${o === order ? own.pressed : ""}`}
            aria-pressed={o === order}
            onClick={() => choose(o)}
          >
            {o === "largest" ? "Largest" : "Newest"}
          </button>
        ))}
      </fieldset>
      {error ? <p className={s.error}>{error.message}</p> : null}
      <div className={own.scroll}>
        <table className={s.table} aria-label="Clusters">
          <thead>
            <tr>
              <th>Canonical headline</th>
              <th className={s.num}>Members</th>
              <th className={s.num}>Outlets</th>
              <th>First seen</th>
            </tr>
          </thead>
          <tbody>
            {data?.clusters.length === 0 ? (
              <tr>
                <td colSpan={4} className={s.muted}>
                  No clusters yet: nothing has been linked.
                </td>
              </tr>
            ) : null}
            {data?.clusters.map((c) => (
              <tr key={c.id} data-cluster-id={c.id}>
                <td className={s.title}>
                  <Link href={`/dedup/clusters/${c.id}`}>
                    {c.canonicalTitle ?? <span className="untitled">(no title)</span>}
                  </Link>
                  <div className={s.muted}>{c.canonicalSource ?? "—"}</div>
                </td>
                <td className={s.num}>{c.members}</td>
                <td className={s.num}>{c.outlets}</td>
                <td className={s.nowrap}>{when(c.firstSeenAt)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <Pager pages={pages} next={data?.nextCursor} firstLabel="← First" nextLabel="More →" />
    </section>
  );
}
