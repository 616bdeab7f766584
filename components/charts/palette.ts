/**
 * The dashboard's colours for statuses and outcomes, one table for every chart: a 5xx is red on
 * the source page, the queues page and the read path alike, and never the green of ok. Charts
 * look a series up by its field or category name (`outcomeColor`); series that are measures, not
 * outcomes (p50, p99, mean…), take `MEASURE_COLORS` in order, a sequence that holds no green,
 * red or amber, so a latency line is never read as a status.
 */
export const STATUS_COLORS = Object.freeze({
  /** Done as asked: 200, hit, completed, processed. */
  ok: "#16a34a",
  /** Nothing new, and nothing wrong: 304, not modified, unchanged. */
  unchanged: "#0891b2",
  /** Refused by the other side for something we asked wrongly or too often: 4xx, 429, robots. */
  refused: "#d97706",
  /** Their fault or ours, and it failed: 5xx, errors, parse errors, failed jobs. */
  failed: "#dc2626",
  /** Nobody answered: timeouts, DNS, TLS, resets, connections refused. */
  unreachable: "#7c3aed",
  /** Gone for good: dead-lettered, archived. */
  dead: "#7f1d1d",
  /** Waiting for another try, or held: retries, paused, stale. */
  waiting: "#ca8a04",
  /** Not attempted: breaker open, disabled, skipped. */
  skipped: "#94a3b8",
});

export type Status = keyof typeof STATUS_COLORS;

/** For lines and bars that measure (latency quantiles, rates): blue, pink, teal, slate, indigo
 * (p50 and p99, the usual pair, must tell apart at a glance: blue and indigo did not). */
export const MEASURE_COLORS = Object.freeze([
  "#2563eb",
  "#db2777",
  "#0d9488",
  "#475569",
  "#4f46e5",
] as const);

/** The i-th measure colour, round the sequence. */
export function measureColor(i: number): string {
  return MEASURE_COLORS[i % MEASURE_COLORS.length] ?? MEASURE_COLORS[0];
}

// Checked in order: the first pattern that matches a normalised name wins, so "http_5xx" is failed
// before the general /error/ rule could matter, and "not_modified" is unchanged before "ok".
const RULES: readonly [RegExp, Status][] = [
  [/^(not_?modified|304|unchanged)$/, "unchanged"],
  [/^(ok|2\d\d|2xx|hit|completed?|processed|succeeded|success|inserted|updated|upgraded)$/, "ok"],
  [/^(http_?)?5(\d\d|xx)$/, "failed"],
  [/^(http_?)?4(\d\d|xx)$|^rate_limited$|^blocked_robots$|^too_large$|^redirect$/, "refused"],
  [/^(timeout|dns|tls|reset|connect|unreachable|outage)$/, "unreachable"],
  [/^(dead|dead_?letter(ed|s)?|discarded|archived|tombstoned)$/, "dead"],
  [/^(retry|retries|retrying|waiting|paused|stale|miss|not_found)$/, "waiting"],
  [/^(breaker_open|disabled|skipped|blocked_ssrf)$/, "skipped"],
  [/(error|errors|fail|failed|failure|failures|malformed|schema|protocol|rejected)/, "failed"],
];

/** The status a series or category name stands for, or undefined when it is a measure. */
export function statusOf(name: string): Status | undefined {
  const key = name
    .trim()
    .replace(/([a-z])([A-Z])/g, "$1_$2")
    .toLowerCase();
  for (const [pattern, status] of RULES) if (pattern.test(key)) return status;
  return undefined;
}

/** The colour of a status or outcome name, or undefined when the name is not one. */
export function outcomeColor(name: string): string | undefined {
  const status = statusOf(name);
  return status ? STATUS_COLORS[status] : undefined;
}

/**
 * Colours for a chart's series, in order: an outcome's own colour, otherwise the next measure
 * colour. Measures count only among themselves, so p50 is blue whether or not an "ok" line
 * comes first.
 */
export function seriesColors(fields: readonly string[]): string[] {
  let measure = 0;
  return fields.map((field) => outcomeColor(field) ?? measureColor(measure++));
}
