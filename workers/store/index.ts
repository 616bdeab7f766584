import type { Database } from "@/lib/db";
import { deliveryLabels, emit } from "@/lib/events";
import {
  type NormalizedObservation,
  normalize,
  RejectedObservation,
  type WriteKind,
} from "./observation";
import { recordRejection } from "./recordRejection";
import { type WriteOutcome, writeObservations } from "./writeObservation";
import { writeRetractions } from "./writeRetraction";

export type { ObservationInput, Origin, WriteResult } from "./observation";
export { NEWS_CHANNEL, type WriteOutcome } from "./writeObservation";

/**
 * The storage contract's writes. Each delivery is validated, then decided and written in one
 * statement (writeObservation.ts, writeRetraction.ts), and always leaves exactly one news_events
 * row, or one more sighting on the row it repeats (docs/decisions/011): bad input is recorded as `rejected` with its reason and the caller gets that outcome back
 * rather than an exception, so one bad item never stops a batch. Database errors (a lost
 * connection) do throw: those deliveries are not recorded and must be retried.
 */
export function observe(db: Database, input: unknown): Promise<WriteOutcome> {
  return writeOne(db, { kind: "observe", input });
}

/** An edit: changes displayed fields and bumps the version; creates the item if unseen. */
export function edit(db: Database, input: unknown): Promise<WriteOutcome> {
  return writeOne(db, { kind: "edit", input });
}

/** A retraction: sets the tombstone; the row stays and nothing brings it back. */
export function retract(db: Database, input: unknown): Promise<WriteOutcome> {
  return writeOne(db, { kind: "retract", input });
}

export interface Delivery {
  kind: WriteKind;
  input: unknown;
}

/** Something that writes deliveries: writeBatch itself, or the write buffer in front of it. */
export type Writer = (deliveries: Delivery[]) => Promise<WriteOutcome[]>;

async function writeOne(db: Database, delivery: Delivery): Promise<WriteOutcome> {
  const [outcome] = await writeBatch(db, [delivery]);
  return outcome as WriteOutcome;
}

// How a long list is cut up. On PostgreSQL a statement waits on a socket while the event loop
// runs, so a window of 1,000 deliveries is validated at once (~30 ms of Node time) and each of
// its rounds is written as up to `lanes` statements in flight on the pool, each of at least
// `minRows` rows (a statement's fixed cost, ~1 ms planning and a round trip, stays small against
// its rows) and at most `chunk`. 4 lanes of the default pool of 10 leave the rest to the queue's
// claims and heartbeats; on the 2-core machine it was measured on, 4 lanes wrote 20,000 bench
// deliveries at 1.6× the rate of 1 lane and 8 lanes were slower than 4 (bench/writer.ts).
// The embedded PGlite has one connection and runs each statement inside this thread, holding the
// loop, so it gets windows of 50, one statement at a time, with a turn for other work between:
// 22–27 ms a window at the median, 35–50 ms at p90 on a loaded 2-core machine, and twice the
// rate of windows of 20 (statement and commit costs spread over more rows).
const CUT = {
  postgres: { window: 1_000, lanes: 4, minRows: 50, chunk: 250 },
  pglite: { window: 50, lanes: 1, minRows: 50, chunk: 50 },
} as const;

type Planned = { at: number; obs: NormalizedObservation };

/**
 * Writes many deliveries with few statements and the same outcome as writing them one by one in
 * order: deliveries of one item are applied in the order given (the n-th delivery of each item
 * goes in the n-th round, and a round starts only once the one before it is committed), and
 * every delivery keeps its own decision and its audit row (or its sighting on the row it
 * repeats, docs/decisions/011). The statements of one round touch distinct items, so they run
 * side by side on the pool without waiting on each other's row locks. Outcomes come back in
 * input order. Long lists go in windows, one after another, which keeps that order.
 */
export async function writeBatch(db: Database, deliveries: Delivery[]): Promise<WriteOutcome[]> {
  const cut = CUT[db.kind] ?? CUT.postgres;
  if (deliveries.length <= cut.window) return writeWindow(db, deliveries, cut);
  const outcomes: WriteOutcome[] = [];
  for (let i = 0; i < deliveries.length; i += cut.window) {
    outcomes.push(...(await writeWindow(db, deliveries.slice(i, i + cut.window), cut)));
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
  return outcomes;
}

async function writeWindow(
  db: Database,
  deliveries: Delivery[],
  cut: (typeof CUT)[keyof typeof CUT],
): Promise<WriteOutcome[]> {
  const outcomes: WriteOutcome[] = new Array(deliveries.length);
  const rounds: Planned[][] = [];
  const seen = new Map<string, number>();
  for (const [at, { kind, input }] of deliveries.entries()) {
    let obs: NormalizedObservation;
    try {
      obs = normalize(input, kind);
    } catch (err) {
      if (!(err instanceof RejectedObservation)) throw err;
      outcomes[at] = await recordRejection(db, input, kind, err.reason);
      continue;
    }
    const round = seen.get(obs.entryKey) ?? 0;
    seen.set(obs.entryKey, round + 1);
    rounds[round] ??= [];
    rounds[round].push({ at, obs });
  }
  for (const round of rounds) {
    const statements: { part: Planned[]; write: RoundWriter }[] = [];
    for (const [write, part] of [
      [writeObservations, round.filter((d) => d.obs.kind !== "retract")],
      [writeRetractions, round.filter((d) => d.obs.kind === "retract")],
    ] as const) {
      const size = Math.min(cut.chunk, Math.max(cut.minRows, Math.ceil(part.length / cut.lanes)));
      for (let i = 0; i < part.length; i += size) {
        statements.push({ part: part.slice(i, i + size), write });
      }
    }
    await inLanes(statements, cut.lanes, async ({ part, write }) => {
      const written = await writeOrIsolate(db, part, write, deliveries);
      for (const [i, outcome] of written.entries()) outcomes[(part[i] as Planned).at] = outcome;
    });
  }
  for (const [at, o] of outcomes.entries())
    emit("observation:written", { ...deliveryLabels(deliveries[at]?.input), result: o.result });
  return outcomes;
}

/**
 * Runs fn over items with at most `lanes` in flight. On a failure no new item starts, and it
 * throws only once those in flight have settled, so nothing of this call is still being written
 * when the caller hears of the error and retries.
 */
async function inLanes<T>(
  items: T[],
  lanes: number,
  fn: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  let failure: { err: unknown } | undefined;
  const lane = async () => {
    while (!failure && next < items.length) {
      const item = items[next++] as T;
      try {
        await fn(item);
      } catch (err) {
        failure ??= { err };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(lanes, items.length) }, lane));
  if (failure) throw failure.err;
}

type RoundWriter = (db: Database, batch: NormalizedObservation[]) => Promise<WriteOutcome[]>;

/**
 * Writes a round in one statement. If the statement fails because some delivery names an unknown
 * source (the news → sources foreign key, so no extra read per write), the round is retried one
 * delivery at a time so that only those are rejected.
 */
async function writeOrIsolate(
  db: Database,
  part: Planned[],
  write: RoundWriter,
  deliveries: Delivery[],
): Promise<WriteOutcome[]> {
  try {
    return await write(
      db,
      part.map((d) => d.obs),
    );
  } catch (err) {
    if (!isUnknownSource(err)) throw err;
    if (part.length === 1) {
      const { at, obs } = part[0] as Planned;
      const source = String(obs.row.source_id);
      return [
        await recordRejection(
          db,
          (deliveries[at] as Delivery).input,
          obs.kind,
          `unknown_source: no source with id "${source}" is configured`,
          obs.entryKey,
        ),
      ];
    }
    const one: WriteOutcome[] = [];
    for (const d of part) one.push(...(await writeOrIsolate(db, [d], write, deliveries)));
    return one;
  }
}

function isUnknownSource(err: unknown): boolean {
  const text = `${(err as Error)?.message ?? ""} ${JSON.stringify((err as { meta?: unknown })?.meta ?? {})}`;
  return /news_source_id_fkey|ForeignKeyConstraintViolation|23503/.test(text);
}
