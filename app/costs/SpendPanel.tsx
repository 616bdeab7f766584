"use client";

import { StackedBarsChart } from "@/components/charts";
import s from "@/components/dashboard.module.css";
import { TimeRangePicker, useTimeRange } from "@/components/ui/TimeRange";
import type { TimeRange } from "@/components/ui/timeRanges";
import type { CostsOverview, SpendOverTime } from "@/lib/dashboard/costs";
import { usd } from "@/lib/dashboard/format";
import own from "./costs.module.css";

/** A colour per series, in spend order; the free local provider is always green. */
const COLORS = ["#2563eb", "#d97706", "#7c3aed", "#dc2626", "#0891b2", "#64748b"];
const LOCAL_COLOR = "#16a34a";

const SPANS = {
  hourly: { label: "24 hours, by hour", time: "time" },
  daily: { label: "30 days, by day", time: "date" },
} as const;

/**
 * The ledger's spend comes by the hour over a day and by the day over 30 days (/api/costs): the
 * dashboard's range picks between them, and says so where it is not the range itself.
 */
const SPAN_OF: Record<TimeRange, { span: keyof typeof SPANS; note?: string }> = {
  "1h": { span: "hourly", note: "Spend is counted by the hour: the last 24 hours." },
  "6h": { span: "hourly", note: "Spend is counted by the hour: the last 24 hours." },
  "24h": { span: "hourly" },
  "7d": { span: "daily", note: "Beyond a day, spend is counted by the day: the last 30 days." },
};

/** Spend over time, stacked by provider and model, with the series' totals beneath. */
export function SpendPanel({ spend }: { spend: CostsOverview["spend"] }) {
  const { span, note } = SPAN_OF[useTimeRange("24h")];
  const data = spend[span];
  return (
    <section aria-labelledby="spend-heading" data-testid="costs-spend">
      <h2 id="spend-heading">Spend over time</h2>
      <TimeRangePicker fallback="24h" note={note} />
      <SpendChart data={data} span={span} />
      <SeriesTable data={data} />
    </section>
  );
}

function SpendChart({ data, span }: { data: SpendOverTime; span: keyof typeof SPANS }) {
  // Fields by position: a model name may hold a dot, which the chart would read as a path.
  const paid = data.series
    .map((series, i) => ({ series, field: `s${i}`, color: colorOf(data, i) }))
    .filter((x) => x.series.costUsd > 0);
  if (paid.length === 0) {
    return (
      <p className={`${s.muted} ${own.emptyChart}`}>
        {data.series.length === 0
          ? `No extraction call in the last ${SPANS[span].label.split(",")[0]}.`
          : `Nothing spent in the last ${SPANS[span].label.split(",")[0]}: every call was to a free provider.`}
      </p>
    );
  }
  const points = data.buckets.map((b) => {
    const point: { t: number; [field: string]: number } = { t: b.t };
    for (const x of paid) point[x.field] = b.usd[x.series.key] ?? 0;
    return point;
  });
  return (
    <StackedBarsChart
      data={points}
      series={paid.map((x) => ({
        field: x.field,
        name: `${x.series.provider} · ${x.series.model}`,
        color: x.color,
      }))}
      valueFormat={usd}
      time={SPANS[span].time}
      label={`Extraction spend over the last ${SPANS[span].label}, stacked by provider and model`}
    />
  );
}

function colorOf(data: SpendOverTime, i: number): string {
  const series = data.series[i];
  if (series?.provider === "local") return LOCAL_COLOR;
  const paidBefore = data.series.slice(0, i).filter((x) => x.provider !== "local").length;
  return COLORS[paidBefore % COLORS.length] as string;
}

function SeriesTable({ data }: { data: SpendOverTime }) {
  if (data.series.length === 0) return null;
  return (
    <table className={`${s.table} ${own.cards}`} aria-label="Spend by provider and model">
      <thead>
        <tr>
          <th>Provider · model</th>
          <th className={s.num}>Spend</th>
          <th className={s.num}>Ledger rows</th>
          <th className={s.num}>Tokens in / out</th>
        </tr>
      </thead>
      <tbody>
        {data.series.map((x, i) => (
          <tr key={x.key} data-series={x.key}>
            <td data-label="Provider · model">
              <span className={own.swatch} style={{ background: colorOf(data, i) }} />
              {x.provider} · <code>{x.model}</code>
            </td>
            <td data-label="Spend" className={s.num}>
              {usd(x.costUsd)}
            </td>
            <td data-label="Ledger rows" className={s.num}>
              {x.calls.toLocaleString("en-GB")}
            </td>
            <td data-label="Tokens in / out" className={s.num}>
              {x.tokensIn.toLocaleString("en-GB")} / {x.tokensOut.toLocaleString("en-GB")}
            </td>
          </tr>
        ))}
      </tbody>
      <tfoot>
        <tr>
          <td>Total</td>
          <td data-label="Spend" className={s.num}>
            <strong>{usd(data.totalUsd)}</strong>
          </td>
          <td className={own.blank} />
          <td className={own.blank} />
        </tr>
      </tfoot>
    </table>
  );
}
