/**
 * Labels only from bounded sets. Enumerated labels (origin, result, code, state) are checked
 * against their enumerations ("other" otherwise). Open labels (source, collector, stage, action)
 * must look like an identifier (no URL, no spaces; "invalid" otherwise) and each metric admits at
 * most LIMITS.values distinct values per open label and LIMITS.series label sets; past that the
 * open labels fold into "other". The bound per metric is therefore LIMITS.series series plus the
 * folded ones (at most the product of its enumerated labels, e.g. 4 origins × 6 results), so one
 * misbehaving source list cannot blow up Prometheus. Database-derived per-source gauges read at
 * most LIMITS.sources sources (enabled first), in bounded queries.
 */
export const LIMITS = {
  /** Distinct values per open label per metric (a deployment has tens of sources, not 500). */
  values: 500,
  /** Label sets per metric before open labels fold into "other". */
  series: 1_000,
  /** Sources read per scrape for the per-source gauges. */
  sources: 500,
} as const;

const IDENTIFIER = /^[A-Za-z0-9][A-Za-z0-9._:-]{0,99}$/;
/**
 * A model id as wirewatch and its suppliers write them: "shipped:use-lite@0.2.0",
 * "local-rules@1", "meta-llama/Llama-3.1-8B-Instruct" (a vLLM name). Still no spaces and no URL;
 * models come from the settings, never from an item.
 */
export const MODEL_ID = /^[A-Za-z0-9][A-Za-z0-9._:@/+-]{0,99}$/;

export type Labels = Record<string, string>;

/**
 * Keeps one metric's label sets bounded (see above). `open` labels are identifiers capped at
 * LIMITS.values distinct values; `closed` ones must be in their enumeration.
 */
export class LabelGuard {
  private readonly values = new Map<string, Set<string>>();
  private readonly series = new Set<string>();

  constructor(
    private readonly open: readonly string[],
    private readonly closed: Record<string, readonly string[]> = {},
    private readonly maxValues: number = LIMITS.values,
    private readonly maxSeries: number = LIMITS.series,
    /** What an open label's value must look like (IDENTIFIER; MODEL_ID for a model's). */
    private readonly patterns: Record<string, RegExp> = {},
  ) {}

  /** Bounded labels from an event or row (fields that are not labels are ignored). */
  labels(raw: Record<string, unknown>): Labels {
    const out: Labels = {};
    for (const name of this.open) {
      const v = raw[name];
      out[name] = this.admit(name, typeof v === "string" ? v : "");
    }
    for (const [name, allowed] of Object.entries(this.closed)) {
      const v = raw[name];
      out[name] = typeof v === "string" && allowed.includes(v) ? v : "other";
    }
    const key = this.key(out);
    if (this.series.has(key)) return out;
    if (this.series.size < this.maxSeries) {
      this.series.add(key);
      return out;
    }
    for (const name of this.open) out[name] = "other";
    return out;
  }

  private admit(name: string, value: string): string {
    if (!(this.patterns[name] ?? IDENTIFIER).test(value) || value.includes("://")) return "invalid";
    let seen = this.values.get(name);
    if (!seen) {
      seen = new Set();
      this.values.set(name, seen);
    }
    if (seen.has(value)) return value;
    if (seen.size >= this.maxValues) return "other";
    seen.add(value);
    return value;
  }

  private key(labels: Labels): string {
    return Object.keys(labels)
      .sort()
      .map((k) => `${k}=${labels[k]}`)
      .join("\u0000");
  }
}

/**
 * Supplier calls by purpose, provider and model (and any enumerated labels): a deployment has a
 * handful of models, 50 leave room for every change of a year; a model label may hold "@" and "/".
 */
export const modelGuard = (
  open: readonly string[],
  closed: Record<string, readonly string[]> = {},
) => new LabelGuard(open, closed, 50, LIMITS.series, { model: MODEL_ID });

/** Stages (queue names) are few: 32 values and label sets, whatever a queue is called. */
export const stageGuard = () => new LabelGuard(["stage"], {}, 32, 32);
