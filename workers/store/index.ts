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

// Deliveries per statement. On PostgreSQL a statement waits on a socket and the event loop runs
// meanwhile; 200 is the write buffer's batch. The embedded PGlite runs each statement inside this
// thread: 200 observations took 0.5–1.7 s there (measured on a loaded 2-core machine), holding
// the loop all along, so it gets 20 at a time (~50–170 ms), with a turn for other work between.
const CHUNK = { postgres: 200, pglite: 20 } as const;

/**
 * Writes many deliveries with few statements and the same outcome as writing them one by one in
 * order: deliveries of one item are applied in the order given (the n-th delivery of each item
 * goes in the n-th round), and every delivery keeps its own decision and its audit row (or its
 * sighting on the row it repeats, docs/decisions/011). Outcomes come back in input order. Long
 * lists go in chunks of CHUNK, one after another, which keeps that order.
 */
export async function writeBatch(db: Database, deliveries: Delivery[]): Promise<WriteOutcome[]> {
  const chunk = CHUNK[db.kind] ?? CHUNK.postgres;
  if (deliveries.length <= chunk) return writeChunk(db, deliveries);
  const outcomes: WriteOutcome[] = [];
  for (let i = 0; i < deliveries.length; i += chunk) {
    outcomes.push(...(await writeChunk(db, deliveries.slice(i, i + chunk))));
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
  return outcomes;
}

async function writeChunk(db: Database, deliveries: Delivery[]): Promise<WriteOutcome[]> {
  const outcomes: WriteOutcome[] = new Array(deliveries.length);
  const rounds: { at: number; obs: NormalizedObservation }[][] = [];
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
    const retractions = round.filter((d) => d.obs.kind === "retract");
    const others = round.filter((d) => d.obs.kind !== "retract");
    for (const [part, write] of [
      [others, writeObservations],
      [retractions, writeRetractions],
    ] as const) {
      if (part.length === 0) continue;
      const written = await writeOrIsolate(db, part, write, deliveries);
      for (const [i, outcome] of written.entries())
        outcomes[(part[i] as { at: number }).at] = outcome;
    }
  }
  for (const [at, o] of outcomes.entries())
    emit("observation:written", { ...deliveryLabels(deliveries[at]?.input), result: o.result });
  return outcomes;
}

type RoundWriter = (db: Database, batch: NormalizedObservation[]) => Promise<WriteOutcome[]>;

/**
 * Writes a round in one statement. If the statement fails because some delivery names an unknown
 * source (the news → sources foreign key, so no extra read per write), the round is retried one
 * delivery at a time so that only those are rejected.
 */
async function writeOrIsolate(
  db: Database,
  part: { at: number; obs: NormalizedObservation }[],
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
      const { at, obs } = part[0] as { at: number; obs: NormalizedObservation };
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
