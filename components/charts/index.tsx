"use client";

// Recharts, wrapped once: panels hand these `data`, never a fetcher, and never import recharts.
import {
  Bar,
  BarChart,
  CartesianGrid,
  Legend,
  Line,
  LineChart,
  ResponsiveContainer,
  Tooltip,
  XAxis,
  YAxis,
} from "recharts";

const COLORS = ["#2563eb", "#dc2626", "#16a34a", "#d97706", "#7c3aed"];

export interface SeriesPoint {
  /** Epoch ms. */
  t: number;
  [series: string]: number | null;
}

const timeLabel = (t: number) =>
  new Date(t).toLocaleTimeString("en-GB", { hour: "2-digit", minute: "2-digit", timeZone: "UTC" });

/** A small line without axes, for a table cell: the shape of the last hour. */
export function Sparkline({
  data,
  field,
  color = COLORS[0],
  label,
}: {
  data: SeriesPoint[];
  field: string;
  color?: string;
  label: string;
}) {
  return (
    <div className="sparkline" role="img" aria-label={label}>
      <ResponsiveContainer width="100%" height={28}>
        <LineChart data={data} margin={{ top: 2, right: 2, bottom: 2, left: 2 }}>
          <Line
            type="monotone"
            dataKey={field}
            stroke={color}
            dot={false}
            strokeWidth={1.5}
            isAnimationActive={false}
          />
        </LineChart>
      </ResponsiveContainer>
    </div>
  );
}

/**
 * Lines over time (UTC), one per named series. `sparse`: points are drawn and gaps (null)
 * bridged, for series with few values among empty buckets.
 */
export function TimeSeriesChart({
  data,
  series,
  unit = "",
  height = 220,
  label,
  sparse = false,
}: {
  data: SeriesPoint[];
  series: { field: string; name: string }[];
  unit?: string;
  height?: number;
  label: string;
  sparse?: boolean;
}) {
  return (
    <div className="chart" role="img" aria-label={label}>
      <ResponsiveContainer width="100%" height={height}>
        <LineChart data={data} margin={{ top: 8, right: 16, bottom: 4, left: 0 }}>
          <CartesianGrid stroke="#e5e7eb" strokeDasharray="3 3" />
          <XAxis
            dataKey="t"
            type="number"
            domain={["dataMin", "dataMax"]}
            tickFormatter={timeLabel}
            fontSize={12}
          />
          <YAxis fontSize={12} unit={unit} width={56} />
          <Tooltip labelFormatter={(t) => `${timeLabel(Number(t))} UTC`} />
          {series.map((s, i) => (
            <Line
              key={s.field}
              type="monotone"
              dataKey={s.field}
              name={s.name}
              stroke={COLORS[i % COLORS.length]}
              dot={sparse ? { r: 2 } : false}
              connectNulls={sparse}
              isAnimationActive={false}
            />
          ))}
        </LineChart>
      </ResponsiveContainer>
    </div>
  );
}

/** Bars by category (a histogram's buckets, counts by code). */
export function BarsChart({
  data,
  x,
  y,
  height = 200,
  label,
}: {
  data: Record<string, string | number>[];
  x: string;
  y: string;
  height?: number;
  label: string;
}) {
  return (
    <div className="chart" role="img" aria-label={label}>
      <ResponsiveContainer width="100%" height={height}>
        <BarChart data={data} margin={{ top: 8, right: 16, bottom: 4, left: 0 }}>
          <CartesianGrid stroke="#e5e7eb" strokeDasharray="3 3" />
          <XAxis dataKey={x} fontSize={12} />
          <YAxis fontSize={12} width={48} allowDecimals={false} />
          <Tooltip />
          <Bar dataKey={y} fill={COLORS[0]} isAnimationActive={false} />
        </BarChart>
      </ResponsiveContainer>
    </div>
  );
}

const dateLabel = (t: number) =>
  new Date(t).toLocaleDateString("en-GB", { day: "numeric", month: "short", timeZone: "UTC" });

/**
 * Bars over time (UTC), one segment per named series stacked in order: shares of a whole per
 * bucket (decisions by stage, spend by model). Each series names its colour so a kind keeps it
 * across pages. `valueFormat`: values are amounts (dollars), not counts: decimals on the axis and
 * in the tooltip, written by it. `time: "date"`: daily buckets, labelled by day.
 */
export function StackedBarsChart({
  data,
  series,
  height = 240,
  label,
  valueFormat,
  time = "time",
}: {
  data: SeriesPoint[];
  series: { field: string; name: string; color: string }[];
  height?: number;
  label: string;
  valueFormat?: (value: number) => string;
  time?: "time" | "date";
}) {
  const tick = time === "date" ? dateLabel : timeLabel;
  return (
    <div className="chart" role="img" aria-label={label}>
      <ResponsiveContainer width="100%" height={height}>
        <BarChart data={data} margin={{ top: 8, right: 16, bottom: 4, left: 0 }} barCategoryGap={1}>
          <CartesianGrid stroke="#e5e7eb" strokeDasharray="3 3" />
          <XAxis dataKey="t" tickFormatter={tick} fontSize={12} minTickGap={24} />
          <YAxis
            fontSize={12}
            width={valueFormat ? 64 : 48}
            allowDecimals={valueFormat !== undefined}
            tickFormatter={valueFormat}
          />
          <Tooltip
            labelFormatter={(t) => `${tick(Number(t))} UTC`}
            formatter={valueFormat ? (v) => valueFormat(Number(v)) : undefined}
          />
          {/* In the order given (the cascade's), not sorted by name. */}
          <Legend wrapperStyle={{ fontSize: 12 }} itemSorter={null} />
          {series.map((s) => (
            <Bar
              key={s.field}
              dataKey={s.field}
              name={s.name}
              stackId="all"
              fill={s.color}
              isAnimationActive={false}
            />
          ))}
        </BarChart>
      </ResponsiveContainer>
    </div>
  );
}
