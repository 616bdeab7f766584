"use client";

// Recharts, wrapped once: panels hand these `data`, never a fetcher, and never import recharts.
import {
  Bar,
  BarChart,
  CartesianGrid,
  Cell,
  Legend,
  Line,
  LineChart,
  ResponsiveContainer,
  Tooltip,
  XAxis,
  YAxis,
} from "recharts";
import { clock, day } from "@/lib/dashboard/format";
import { MEASURE_COLORS, outcomeColor, seriesColors } from "./palette";

export { MEASURE_COLORS, outcomeColor, STATUS_COLORS, seriesColors, statusOf } from "./palette";

export interface SeriesPoint {
  /** Epoch ms. */
  t: number;
  [series: string]: number | null;
}

const timeLabel = clock;
const DAY_MS = 86_400_000;
/** For a chart over more than a day, where a clock alone repeats: "12-03 14:00". */
const dayTimeLabel = (t: number) => `${day(t).slice(5)} ${clock(t)}`;

/**
 * A small line without axes, for a table cell: the shape of the last hour. Its colour is the
 * field's status colour when it names one (errors are red), else the first measure colour.
 */
export function Sparkline({
  data,
  field,
  color = outcomeColor(field) ?? MEASURE_COLORS[0],
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
 * Lines over time (UTC), one per named series, coloured by the palette (an outcome's own colour,
 * measures in sequence), with a legend when there are several. `sparse`: points are drawn and
 * gaps (null) bridged, for series with few values among empty buckets. Over more than a day the
 * ticks carry the date as well.
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
  const colors = seriesColors(series.map((s) => s.field));
  const days = (data.at(-1)?.t ?? 0) - (data[0]?.t ?? 0) > DAY_MS;
  const tick = days ? dayTimeLabel : timeLabel;
  return (
    <div className="chart" role="img" aria-label={label}>
      <ResponsiveContainer width="100%" height={height}>
        <LineChart data={data} margin={{ top: 8, right: 16, bottom: 4, left: 0 }}>
          <CartesianGrid stroke="#e5e7eb" strokeDasharray="3 3" />
          <XAxis
            dataKey="t"
            type="number"
            domain={["dataMin", "dataMax"]}
            tickFormatter={tick}
            fontSize={12}
            minTickGap={days ? 24 : 5}
          />
          <YAxis fontSize={12} unit={unit} width={56} />
          <Tooltip labelFormatter={(t) => `${day(Number(t))} ${clock(Number(t))} UTC`} />
          {series.length > 1 ? <Legend wrapperStyle={{ fontSize: 12 }} /> : null}
          {series.map((s, i) => (
            <Line
              key={s.field}
              type="monotone"
              dataKey={s.field}
              name={s.name}
              stroke={colors[i]}
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

/**
 * Bars by category (a histogram's buckets, counts by code). A category that names an outcome
 * (http_5xx, ok, timeout) takes its palette colour; the rest the first measure colour.
 */
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
          <Bar dataKey={y} fill={MEASURE_COLORS[0]} isAnimationActive={false}>
            {data.map((row) => (
              <Cell key={String(row[x])} fill={outcomeColor(String(row[x])) ?? MEASURE_COLORS[0]} />
            ))}
          </Bar>
        </BarChart>
      </ResponsiveContainer>
    </div>
  );
}

const dateLabel = day;

/**
 * Bars over time (UTC), one segment per named series stacked in order: shares of a whole per
 * bucket (decisions by stage, spend by model). Each series names its colour so a kind keeps it
 * across pages; a series that is an outcome should take it from the palette (`outcomeColor`). `valueFormat`: values are amounts (dollars), not counts: decimals on the axis and
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
