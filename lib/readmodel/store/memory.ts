import { type Payload, type ReadModelStore, ReadModelUnavailableError } from "../types";
import { HEAD_ROW, type PayloadTable } from "./table";

type Head = { modelVersion: number; builtAt: Date };

/**
 * The model in this process (no REDIS_URL): a Map of payloads, backed by read_payloads so a
 * restart serves the last model at once. Reads never touch the database: get() and head() answer
 * from the Map; only put() writes through (after a build, or a page built on a miss) and
 * refresh() reads rows of a newer version (a builder in another process wrote them), both off
 * the request's path.
 */
export class MemoryStore implements ReadModelStore {
  readonly kind = "memory" as const;
  private readonly payloads = new Map<string, Payload>();
  private current: Head | null = null;
  private timer: NodeJS.Timeout | null = null;
  private refreshing: Promise<void> | null = null;

  constructor(private readonly table: PayloadTable | null = null) {}

  /** Loads the table (everything: a restart serves the last model at once). */
  static async open(table: PayloadTable | null): Promise<MemoryStore> {
    const store = new MemoryStore(table);
    if (table) store.absorb(await unavailable("load read_payloads", () => table.load()));
    return store;
  }

  async get(key: string): Promise<Payload | null> {
    return this.payloads.get(key) ?? null;
  }

  async put(payloads: readonly Payload[]): Promise<void> {
    const fresh = payloads.filter((p) => this.keep(p));
    if (this.table && fresh.length) {
      const table = this.table;
      await unavailable("write read_payloads", () => table.upsert(fresh));
    }
  }

  async head(): Promise<Head | null> {
    return this.current;
  }

  async setHead(head: Head): Promise<void> {
    if (this.current && this.current.modelVersion > head.modelVersion) return;
    this.current = { ...head };
    if (this.table) {
      const table = this.table;
      await unavailable("write the head", () =>
        table.upsert([
          {
            key: HEAD_ROW,
            modelVersion: head.modelVersion,
            etag: "",
            body: Buffer.alloc(0),
            builtAt: head.builtAt,
          },
        ]),
      );
    }
  }

  async delete(keys: readonly string[]): Promise<void> {
    for (const key of keys) this.payloads.delete(key);
    if (this.table && keys.length) {
      const table = this.table;
      await unavailable("delete from read_payloads", () => table.remove(keys));
    }
  }

  async lock(): Promise<boolean> {
    return true;
  }

  async unlock(): Promise<void> {}

  /**
   * Reads rows newer than this process's head: a builder in another process (workers/main.ts on
   * PostgreSQL) wrote them. A failure leaves the Map as it was (the last model goes on serving).
   */
  refresh(): Promise<void> {
    const table = this.table;
    if (!table) return Promise.resolve();
    this.refreshing ??= (async () => {
      try {
        const before = this.current?.modelVersion ?? -1;
        this.absorb(await table.load(before));
        // A newer head means another process built: what its builder deleted (a retracted
        // story, old orders) is gone from the table, so it goes from here too. One keys-only
        // read per build (a few thousand short keys), never per request.
        if ((this.current?.modelVersion ?? -1) > before) {
          const present = new Set(await table.keys());
          for (const key of this.payloads.keys()) if (!present.has(key)) this.payloads.delete(key);
        }
      } finally {
        this.refreshing = null;
      }
    })();
    return this.refreshing;
  }

  /** Refreshes every `intervalMs` (the build interval) until close; failures wait for the next. */
  startRefresh(intervalMs: number): void {
    if (!this.table || this.timer) return;
    this.timer = setInterval(() => this.refresh().catch(() => undefined), intervalMs);
    this.timer.unref();
  }

  async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.refreshing?.catch(() => undefined);
    await this.table?.close();
  }

  /** Keeps a payload unless this process holds a newer version of its key. */
  private keep(p: Payload): boolean {
    const held = this.payloads.get(p.key);
    if (held && held.modelVersion > p.modelVersion) return false;
    this.payloads.set(p.key, p);
    return true;
  }

  private absorb(rows: Payload[]): void {
    for (const row of rows) {
      if (row.key === HEAD_ROW) {
        if (!this.current || this.current.modelVersion < row.modelVersion) {
          this.current = { modelVersion: row.modelVersion, builtAt: row.builtAt };
        }
      } else {
        this.keep(row);
      }
    }
  }
}

async function unavailable<T>(what: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    throw new ReadModelUnavailableError(`read model: cannot ${what}: ${(err as Error).message}`, {
      cause: err,
    });
  }
}
