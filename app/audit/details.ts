/**
 * An audit row's target and detail (free JSON, written by each admin action) as key/value pairs
 * a person reads down: nested objects become dotted keys ("filter.stage"), a list of plain values
 * one comma-separated value, a list of objects one numbered key per element ("groups[0].count").
 * Bounded so one action that touched thousands of ids cannot fill the page: at most
 * MAX_LIST_ITEMS values of a list and MAX_PAIRS pairs a row, each cut says how many it left out.
 */
export interface Pair {
  key: string;
  value: string;
}

export const MAX_LIST_ITEMS = 10;
export const MAX_PAIRS = 40;
const MAX_DEPTH = 4;

function scalar(value: unknown): string {
  if (value === null || value === undefined) return "–";
  if (typeof value === "string") return value === "" ? '""' : value;
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  return JSON.stringify(value);
}

function isPlain(value: unknown): boolean {
  return value === null || typeof value !== "object";
}

function walk(value: unknown, key: string, depth: number, out: Pair[]): void {
  if (isPlain(value) || depth >= MAX_DEPTH) {
    out.push({ key, value: scalar(value) });
    return;
  }
  if (Array.isArray(value)) {
    const shown = value.slice(0, MAX_LIST_ITEMS);
    const more = value.length > shown.length ? ` … ${value.length - shown.length} more` : "";
    if (value.length === 0) out.push({ key, value: "none" });
    else if (shown.every(isPlain)) out.push({ key, value: shown.map(scalar).join(", ") + more });
    else {
      shown.forEach((element, i) => {
        walk(element, `${key}[${i}]`, depth + 1, out);
      });
      if (more) out.push({ key: `${key}[…]`, value: more.trim() });
    }
    return;
  }
  const entries = Object.entries(value as Record<string, unknown>);
  if (entries.length === 0) out.push({ key, value: "none" });
  for (const [k, v] of entries) walk(v, key ? `${key}.${k}` : k, depth + 1, out);
}

/** The pairs of one JSON value; a bare string or number is one pair under `fallbackKey`. */
export function pairsOf(value: unknown, fallbackKey = "value"): Pair[] {
  if (value === null || value === undefined) return [];
  const out: Pair[] = [];
  walk(value, isPlain(value) || Array.isArray(value) ? fallbackKey : "", 0, out);
  if (out.length <= MAX_PAIRS) return out;
  return [...out.slice(0, MAX_PAIRS), { key: "…", value: `${out.length - MAX_PAIRS} more values` }];
}
