/**
 * The dashboard's time ranges: one choice for every page that draws time, kept in the URL
 * (`?range=6h`) so a link, a reload or another page opens on it. A plain module: the picker, the
 * navigation, the routes that take `range` and the e2e specs share it.
 */
export const TIME_RANGES = ["1h", "6h", "24h", "7d"] as const;
export type TimeRange = (typeof TIME_RANGES)[number];

/** The query parameter that carries the range from page to page. */
export const RANGE_PARAM = "range";

export const RANGE_HOURS: Readonly<Record<TimeRange, number>> = Object.freeze({
  "1h": 1,
  "6h": 6,
  "24h": 24,
  "7d": 168,
});

/** The picker's words for each range: "last 6 h". */
export const RANGE_LABELS: Readonly<Record<TimeRange, string>> = Object.freeze({
  "1h": "last 1 h",
  "6h": "last 6 h",
  "24h": "last 24 h",
  "7d": "last 7 d",
});

/** A range as written in a URL, or null for anything else (absent, misspelt, "2h"). */
export function parseTimeRange(value: string | null | undefined): TimeRange | null {
  return (TIME_RANGES as readonly string[]).includes(value ?? "") ? (value as TimeRange) : null;
}

/**
 * The longest of `offered` that fits in `range`, else the shortest offered: for a page whose
 * data come in fixed windows (dedup's 6, 24 and 72 hours). Equal when the page has the range.
 */
export function nearestHours(range: TimeRange, offered: readonly number[]): number {
  const wanted = RANGE_HOURS[range];
  const sorted = [...offered].sort((a, b) => a - b);
  const within = sorted.filter((h) => h <= wanted);
  return within.at(-1) ?? (sorted[0] as number);
}

/**
 * `href` with the range in its query (replacing one already there), or as it is when there is
 * none to carry. Keeps the path, the other parameters and the fragment.
 */
export function withTimeRange(href: string, range: TimeRange | null): string {
  if (!range) return href;
  const hashAt = href.indexOf("#");
  const hash = hashAt >= 0 ? href.slice(hashAt) : "";
  const rest = hashAt >= 0 ? href.slice(0, hashAt) : href;
  const queryAt = rest.indexOf("?");
  const path = queryAt >= 0 ? rest.slice(0, queryAt) : rest;
  const params = new URLSearchParams(queryAt >= 0 ? rest.slice(queryAt + 1) : "");
  params.set(RANGE_PARAM, range);
  return `${path}?${params.toString()}${hash}`;
}
