import type { Database } from "@/lib/db";
import { emit } from "@/lib/events";
import { type Delivery, type WriteOutcome, type Writer, writeBatch } from "@/workers/store";

export interface WriteBufferOptions {
  /** Deliveries held in memory at most; a producer that would go past it waits. */
  capacity?: number;
  /** Deliveries per writer call. */
  batchSize?: number;
  write?: Writer;
}

export interface WriteBufferStats {
  capacity: number;
  /** Deliveries waiting to be written now. */
  queued: number;
  /** Producers that had to wait for room, and for how long in all. */
  waits: number;
  waitedMs: number;
  /** Deliveries refused because the buffer was closing (their job fails and runs again). */
  dropped: number;
  written: number;
  batches: number;
  /** Writer calls that threw (a lost database): their producers were told, and retry. */
  writeErrors: number;
}

export class BufferClosedError extends Error {
  constructor() {
    super("the write buffer is closing; deliveries were not accepted");
    this.name = "BufferClosedError";
  }
}

interface Pending {
  delivery: Delivery;
  chunk: Chunk;
  /** Its place in the producer's call, for putting outcomes back in order. */
  index: number;
}

interface Chunk {
  outcomes: WriteOutcome[];
  left: number;
  resolve: (outcomes: WriteOutcome[]) => void;
  reject: (err: unknown) => void;
}

export interface WriteBuffer {
  /**
   * Hands deliveries to the store stage and resolves with their outcomes once written, so a
   * fetch job completes only after what it read is durable. Waits while the buffer is full: a
   * slow writer slows the fetchers instead of growing memory.
   */
  write: Writer;
  stats(): WriteBufferStats;
  /** Refuses new deliveries, wakes waiting producers with BufferClosedError, writes the rest. */
  close(): Promise<void>;
}

/**
 * The bounded, in-memory hand-over between fetch/parse and store: many producers (fetch jobs,
 * streams), one writer loop that takes up to `batchSize` deliveries at a time in arrival order
 * (so one item's deliveries keep their order) and writes them in one writeBatch. Nothing is
 * dropped while open; waits and any drops are counted for the dashboard.
 */
export function createWriteBuffer(db: Database, options: WriteBufferOptions = {}): WriteBuffer {
  const capacity = Math.max(1, options.capacity ?? 1_000);
  const batchSize = Math.max(1, Math.min(options.batchSize ?? 200, capacity));
  const write = options.write ?? ((deliveries: Delivery[]) => writeBatch(db, deliveries));
  const stats: WriteBufferStats = {
    capacity,
    queued: 0,
    waits: 0,
    waitedMs: 0,
    dropped: 0,
    written: 0,
    batches: 0,
    writeErrors: 0,
  };
  const queue: Pending[] = [];
  // Producers waiting for room, in arrival order, each with the room it needs.
  const roomWaiters: { need: number; wake: () => void; fail: (err: Error) => void }[] = [];
  let wakeWriter: (() => void) | null = null;
  let closing = false;

  // Room promised to producers that were woken but have not yet put their deliveries in.
  let reserved = 0;
  const hasRoom = (need: number) => queue.length + reserved + need <= capacity;

  const admitWaiters = () => {
    while (roomWaiters.length > 0) {
      const next = roomWaiters[0];
      if (!next || !hasRoom(next.need)) break;
      roomWaiters.shift();
      reserved += next.need;
      next.wake();
    }
  };

  const put = async (deliveries: Delivery[], chunk: Chunk, firstIndex: number) => {
    // First come, first served: a producer never overtakes one already waiting.
    if (roomWaiters.length > 0 || !hasRoom(deliveries.length)) {
      stats.waits++;
      emit("buffer:waited", { stage: "store" });
      const started = Date.now();
      await new Promise<void>((wake, fail) => {
        roomWaiters.push({ need: deliveries.length, wake, fail });
      });
      reserved -= deliveries.length;
      stats.waitedMs += Date.now() - started;
    }
    for (const [i, delivery] of deliveries.entries()) {
      queue.push({ delivery, chunk, index: firstIndex + i });
    }
    stats.queued = queue.length;
    wakeWriter?.();
    admitWaiters();
  };

  const bufferWrite: Writer = async (deliveries) => {
    if (deliveries.length === 0) return [];
    if (closing) {
      stats.dropped += deliveries.length;
      emit("buffer:dropped", { stage: "store", count: deliveries.length });
      throw new BufferClosedError();
    }
    return new Promise<WriteOutcome[]>((resolve, reject) => {
      const chunk: Chunk = {
        outcomes: new Array(deliveries.length),
        left: deliveries.length,
        resolve,
        reject,
      };
      // Larger than the whole buffer: handed over in pieces, each waiting for room.
      void (async () => {
        let offset = 0;
        try {
          for (let at = 0; at < deliveries.length; at += capacity) {
            const piece = deliveries.slice(at, at + capacity);
            await put(piece, chunk, at);
            offset += piece.length;
          }
        } catch (err) {
          stats.dropped += deliveries.length - offset;
          emit("buffer:dropped", { stage: "store", count: deliveries.length - offset });
          reject(err);
        }
      })();
    });
  };

  const writerDone = (async () => {
    for (;;) {
      if (queue.length === 0) {
        if (closing) return;
        await new Promise<void>((resolve) => {
          wakeWriter = resolve;
        });
        wakeWriter = null;
        continue;
      }
      const batch = queue.splice(0, batchSize);
      stats.queued = queue.length;
      admitWaiters();
      try {
        const outcomes = await write(batch.map((p) => p.delivery));
        stats.batches++;
        stats.written += batch.length;
        batch.forEach((p, i) => {
          p.chunk.outcomes[p.index] = outcomes[i] as WriteOutcome;
          p.chunk.left--;
          if (p.chunk.left === 0) p.chunk.resolve(p.chunk.outcomes);
        });
      } catch (err) {
        // Not written: every producer with a delivery in this batch is told, and its job
        // fails and runs again (the writer is idempotent, so what did land is not doubled).
        stats.writeErrors++;
        const told = new Set<Chunk>();
        for (const p of batch) {
          if (told.has(p.chunk)) continue;
          told.add(p.chunk);
          p.chunk.left = -1;
          p.chunk.reject(err);
        }
        // Their other deliveries still queued are moot now: take them out.
        for (let i = queue.length - 1; i >= 0; i--) {
          if (told.has((queue[i] as Pending).chunk)) queue.splice(i, 1);
        }
        stats.queued = queue.length;
        admitWaiters();
      }
    }
  })();

  return {
    write: bufferWrite,
    stats: () => ({ ...stats, queued: queue.length }),
    close: async () => {
      closing = true;
      for (const waiter of roomWaiters.splice(0)) waiter.fail(new BufferClosedError());
      wakeWriter?.();
      await writerDone;
    },
  };
}
