// Formatting shared by the dashboard's client components: short, for table cells and tiles.
//
// Dates, one format everywhere (app/ and components/ render no date any other way):
// - an instant is absolute UTC, "2026-12-01 11:39:59 UTC" (`when`): the pipeline, the logs, the
//   metrics and the database all speak UTC, and an operator comparing a row with a log line
//   should not convert zones; the zone is always written, so it is never mistaken for local;
// - where a page shows recency (last seen, next poll), it is relative, "3.5 min ago" (`relative`),
//   with the absolute instant in the element's title (`utc`);
// - chart axes are UTC clock times or days (`clock`, `day`), their tooltips say "UTC".

/** 42 s, 3.5 min, 2.1 h, 1.5 d. */
export function duration(seconds: number): string {
  const s = Math.abs(seconds);
  if (s < 90) return `${Math.round(s)} s`;
  if (s < 90 * 60) return `${(s / 60).toFixed(1)} min`;
  if (s < 48 * 3600) return `${(s / 3600).toFixed(1)} h`;
  return `${(s / 86_400).toFixed(1)} d`;
}

/** "12 s ago", "in 40 s", or "–" for no time; `now` is the server's time of the answer. */
export function relative(iso: string | null | undefined, now: string | number | Date): string {
  if (!iso) return "–";
  const diff = (new Date(iso).getTime() - new Date(now).getTime()) / 1000;
  if (Math.abs(diff) < 1) return "now";
  return diff < 0 ? `${duration(-diff)} ago` : `in ${duration(diff)}`;
}

/** How long something has lasted, or "—" when nothing has yet (no dead letter, so no oldest). */
export function age(seconds: number | null | undefined): string {
  return seconds === null || seconds === undefined ? "—" : duration(seconds);
}

/**
 * An instant as UTC, "2026-12-01 11:39:59 UTC", or "—" for none. `"ms"` keeps the milliseconds,
 * for an item's timeline, where observations less than a second apart must still read in order.
 */
export function when(iso: string | null | undefined, precision: "s" | "ms" = "s"): string {
  if (!iso) return "—";
  return `${iso.slice(0, precision === "ms" ? 23 : 19).replace("T", " ")} UTC`;
}

/** An epoch-ms instant as a UTC clock time, "14:05", for a chart's time axis. */
export function clock(t: number): string {
  return new Date(t).toISOString().slice(11, 16);
}

/** An epoch-ms instant as its UTC day, "2026-12-01", for a chart of daily buckets. */
export function day(t: number): string {
  return new Date(t).toISOString().slice(0, 10);
}

/** An instant as UTC for a title attribute: none at all when there is no time. */
export function utc(iso: string | null | undefined): string | undefined {
  return iso ? when(iso) : undefined;
}

/** 0.123 → "12%"; null → "–". */
export function percent(share: number | null | undefined): string {
  if (share === null || share === undefined) return "–";
  if (share > 0 && share < 0.01) return "<1%";
  return `${Math.round(share * 100)}%`;
}

/** Milliseconds as a short duration. */
export function ms(value: number | null | undefined): string {
  if (value === null || value === undefined) return "–";
  return value < 1000 ? `${Math.round(value)} ms` : duration(value / 1000);
}

/**
 * Dollars: cents from a cent up ("$1.25"), else enough digits to see a fraction of a cent
 * ("$0.0042"): one extraction by a small model costs a tenth of a cent.
 */
export function usd(value: number | null | undefined): string {
  if (value === null || value === undefined) return "–";
  if (value === 0) return "$0";
  const abs = Math.abs(value);
  if (abs >= 100) return `$${Math.round(value).toLocaleString("en-GB")}`;
  if (abs >= 0.01) return `$${value.toFixed(2)}`;
  return `$${value.toPrecision(2)}`;
}
