import fc from "fast-check";
import type { ObservationInput } from "../observation";

/**
 * A small, independent model of the storage contract for property tests, and generators of
 * realistic deliveries for one item. The model states the contract as plainly as possible, over
 * the deliveries in the order the writer applied them (the news_events id order of the item):
 *
 *   - deliveries after the first retraction change nothing (tombstones are final);
 *   - the first delivery creates the row; later fallback deliveries never count;
 *   - title, link, summary, category: the value with the highest stamp wins
 *     (stamp 0 fallback, 1 authoritative without revision, 2 + revision); on a tie the earlier;
 *   - language, published: the first value given (fallback included, if it was first);
 *   - breaking: true if any counted delivery says so; instruments: the union.
 *
 * For values that agree within a revision (as a real source's do) the result does not depend
 * on the order at all, which the property tests check separately.
 *
 * History (docs/decisions/011): every delivery is one news_events row, except an observation or
 * edit identical to the item's previous delivery (same collector, origin, kind and content; only
 * the observation time may differ), which is counted on that row instead. Such a repeat can never
 * change the row, so the rules above give the same result with or without it.
 */

export type Delivery =
  | { kind: "observe" | "edit"; input: ObservationInput }
  | { kind: "retract"; input: ObservationInput };

export interface ModelRow {
  quality: "fallback" | "authoritative";
  title: string | null;
  link: string | null;
  summary: string | null;
  category: string | null;
  language: string | null;
  publishedAt: string | null;
  breaking: boolean;
  instruments: string[];
  deleted: boolean;
}

const STAMPED = ["title", "link", "summary", "category"] as const;

/** What the model predicts, read off a stored news row. */
export function toModelRow(r: {
  quality: string;
  title: string | null;
  link: string | null;
  summary: string | null;
  category: string | null;
  language: string | null;
  publishedAt: Date | null;
  breaking: boolean;
  instruments: string[];
  deletedAt: Date | null;
}): ModelRow {
  return {
    quality: r.quality as ModelRow["quality"],
    title: r.title,
    link: r.link,
    summary: r.summary,
    category: r.category,
    language: r.language,
    publishedAt: r.publishedAt?.toISOString() ?? null,
    breaking: r.breaking,
    instruments: r.instruments,
    deleted: r.deletedAt !== null,
  };
}

function stamp(d: Delivery): number {
  if (d.input.origin === "fallback") return 0;
  const r = d.input.revision;
  if (r === undefined || r === null) return 1;
  return (typeof r === "number" ? r : new Date(r as string).getTime()) + 2;
}

function counts(d: Delivery, isFirst: boolean): boolean {
  return isFirst || d.input.origin !== "fallback";
}

export function expectedRow(applied: Delivery[]): ModelRow {
  const firstRetraction = applied.findIndex((d) => d.kind === "retract");
  const live = firstRetraction < 0 ? applied : applied.slice(0, firstRetraction);
  const counted = live.filter((d, i) => counts(d, i === 0));
  const row: ModelRow = {
    quality:
      live.length === 0 || counted.some((d) => d.input.origin !== "fallback")
        ? "authoritative"
        : "fallback",
    title: null,
    link: null,
    summary: null,
    category: null,
    language: null,
    publishedAt: null,
    breaking: false,
    instruments: [],
    deleted: firstRetraction >= 0,
  };
  for (const field of STAMPED) {
    let best: { value: string; stamp: number } | null = null;
    for (const d of counted) {
      const value = d.input[field];
      if (typeof value !== "string" || value === "") continue;
      if (field !== "title" && field !== "link" && d.input.origin === "fallback") continue;
      if (!best || stamp(d) > best.stamp) best = { value, stamp: stamp(d) };
    }
    row[field] = best?.value ?? null;
  }
  // The page observer's breaking flag and instruments are never taken (it cannot see them).
  const trusted = counted.filter((d) => d.input.origin !== "fallback");
  row.language = (counted.find((d) => d.input.language)?.input.language as string) ?? null;
  const published = counted.find((d) => d.input.publishedAt)?.input.publishedAt;
  row.publishedAt = published ? new Date(published as string).toISOString() : null;
  row.breaking = trusted.some((d) => d.input.breaking === true);
  row.instruments = [
    ...new Set(trusted.flatMap((d) => (d.input.instruments ?? []) as string[])),
  ].sort();
  return row;
}

/** The sightings of each news_events row the item's deliveries make, in the order applied. */
export function expectedSightings(applied: Delivery[]): number[] {
  const rows: number[] = [];
  let previous: string | null = null;
  for (const d of applied) {
    const { observedAt: _at, ...content } = d.input;
    const same = JSON.stringify([d.kind, sortedKeys(content)]);
    if (d.kind !== "retract" && same === previous) rows.push((rows.pop() ?? 0) + 1);
    else rows.push(1);
    previous = same;
  }
  return rows;
}

/** The content as the writer stores it: nothing, empty, false and [] alike; sets sorted. */
function sortedKeys(o: Record<string, unknown>): [string, unknown][] {
  return Object.entries(o)
    .filter(([, v]) => v !== undefined && v !== null && v !== "" && v !== false)
    .map(([k, v]): [string, unknown] => [k, Array.isArray(v) ? [...new Set(v)].sort() : v])
    .filter(([, v]) => !(Array.isArray(v) && v.length === 0))
    .sort(([a], [b]) => (a < b ? -1 : 1));
}

/** One item's truth: what the source says at each of its revisions. */
export interface ItemTruth {
  revisions: {
    title: string;
    link: string;
    summary: string | null;
    category: string | null;
    breaking: boolean;
    instruments: string[];
  }[];
  language: string | null;
  publishedAt: string | null;
}

const truthArb: fc.Arbitrary<ItemTruth> = fc.record({
  // Few distinct values, so edits back and forth (A, B, A) and equal values across revisions occur.
  revisions: fc.array(
    fc.record({
      title: fc.constantFrom("Rates held", "Rates held, cut signalled", "সুদের হার অপরিবর্তিত"),
      link: fc.constantFrom("https://news.example/rates", "https://news.example/rates-update"),
      summary: fc.option(fc.constantFrom("Policy unchanged.", "Policy unchanged; cut later.")),
      category: fc.option(fc.constantFrom("economy", "markets")),
      breaking: fc.boolean(),
      instruments: fc.subarray(["EURUSD", "DE10Y", "SPX"]),
    }),
    { minLength: 1, maxLength: 4 },
  ),
  language: fc.option(fc.constantFrom("en", "bn")),
  publishedAt: fc.option(fc.constantFrom("2026-06-12T09:00:00.000Z")),
});

type Plan =
  | { kind: "fallback"; rev: number; collector: string }
  | {
      kind: "authoritative";
      rev: number;
      origin: "primary" | "poll" | "backfill";
      collector: string;
      withRevision: boolean;
      drop: { summary: boolean; category: boolean; breaking: boolean; instruments: boolean };
    }
  | { kind: "edit"; rev: number; collector: string }
  | { kind: "retract"; rev: number; collector: string };

const planArb = (revisions: number): fc.Arbitrary<Plan> => {
  const rev = fc.integer({ min: 0, max: revisions - 1 });
  const collector = fc.constantFrom("A", "B");
  return fc.oneof(
    { weight: 2, arbitrary: fc.record({ kind: fc.constant("fallback" as const), rev, collector }) },
    {
      weight: 4,
      arbitrary: fc.record({
        kind: fc.constant("authoritative" as const),
        rev,
        origin: fc.constantFrom("primary" as const, "poll" as const, "backfill" as const),
        collector,
        withRevision: fc.boolean(),
        drop: fc.record({
          summary: fc.boolean(),
          category: fc.boolean(),
          breaking: fc.boolean(),
          instruments: fc.boolean(),
        }),
      }),
    },
    { weight: 2, arbitrary: fc.record({ kind: fc.constant("edit" as const), rev, collector }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant("retract" as const), rev, collector }) },
  );
};

/**
 * Deliveries of one item as a real newsroom produces them: views of the item at its revisions,
 * whole (edits, the primary stream) or partial (a poll without categories, the page observer),
 * plus retractions and exact duplicates. Values agree within a revision. An authoritative view
 * without a source revision is always of the first revision (a feed without update dates).
 * Each delivery gets a distinct observation time, which later identifies it in news_events.
 */
export type { Plan };

export function deliveriesArb(): fc.Arbitrary<{ truth: ItemTruth; plans: Plan[] }> {
  return truthArb.chain((truth) =>
    fc.array(planArb(truth.revisions.length), { minLength: 1, maxLength: 10 }).chain((plans) =>
      // exact duplicates: some plans delivered again
      fc
        .subarray(plans, { maxLength: Math.min(3, plans.length) })
        .map((again) => ({ truth, plans: [...plans, ...again] })),
    ),
  );
}

export function toDeliveries(
  truth: ItemTruth,
  order: Plan[],
  identity: { sourceId: string; guid: string },
  start: number,
  plans: Plan[] = order,
): Delivery[] {
  return order.map((plan) => {
    // A plan's time is its first place in `plans`: a duplicate (the same plan object again)
    // gets the same time, as a true duplicate would, whatever order it is delivered in.
    const observedAt = new Date(start + plans.indexOf(plan)).toISOString();
    const v = truth.revisions[plan.rev] ?? truth.revisions[0];
    if (!v) throw new Error("an item needs at least one revision");
    return deliveryFor(plan, truth, v, { ...identity, collector: plan.collector, observedAt });
  });
}

function deliveryFor(
  plan: Plan,
  truth: ItemTruth,
  v: ItemTruth["revisions"][number],
  base: { sourceId: string; guid: string; collector: string; observedAt: string },
): Delivery {
  switch (plan.kind) {
    case "fallback":
      return {
        kind: "observe",
        input: { ...base, origin: "fallback", title: v.title, link: v.link },
      };
    case "retract":
      return { kind: "retract", input: { ...base, origin: "primary", revision: plan.rev + 1 } };
    case "edit":
      return {
        kind: "edit",
        input: { ...base, origin: "primary", ...whole(truth, v), revision: plan.rev + 1 },
      };
    case "authoritative": {
      const view = plan.withRevision ? v : (truth.revisions[0] ?? v);
      const input: ObservationInput = {
        ...base,
        origin: plan.origin,
        ...whole(truth, view),
        revision: plan.withRevision ? plan.rev + 1 : undefined,
      };
      if (plan.drop.summary) input.summary = undefined;
      if (plan.drop.category) input.category = undefined;
      if (plan.drop.breaking) input.breaking = undefined;
      if (plan.drop.instruments) input.instruments = undefined;
      return { kind: "observe", input };
    }
  }
}

function whole(truth: ItemTruth, v: ItemTruth["revisions"][number]) {
  return {
    title: v.title,
    link: v.link,
    summary: v.summary ?? undefined,
    category: v.category ?? undefined,
    breaking: v.breaking,
    instruments: v.instruments,
    language: truth.language ?? undefined,
    publishedAt: truth.publishedAt ?? undefined,
  };
}
