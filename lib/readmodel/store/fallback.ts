import { emit } from "../../events";
import { logger } from "../../logger";
import { type Payload, type ReadModelStore, ReadModelUnavailableError } from "../types";
import { MemoryStore } from "./memory";
import type { RedisStore } from "./redis";

/**
 * Redis down → this process's memory, and back. The copy is what this process last read from
 * Redis or wrote to it (a Map, no table), so a reader gets the last model it saw, with its age.
 *
 * The first failure switches to the copy and emits `readmodel:store` {fallback: true}; while in
 * fallback no request waits on Redis at all (a blackholed server would cost each reader the
 * 200 ms command timeout): a probe PINGs every second instead, and the first answer switches
 * back, writing what was built meanwhile (puts and the head) to Redis first, so the other
 * instances see it. 1 s keeps a restarted Redis out of use for at most a second while costing a
 * dead one one PING a second per process.
 */
export const PROBE_INTERVAL_MS = 1_000;

export class FallbackStore implements ReadModelStore {
  private readonly copy = new MemoryStore(null);
  private fallback = false;
  private probe: NodeJS.Timeout | null = null;
  /** What was written while Redis was down, replayed when it answers again. */
  private pending = new Map<string, Payload>();
  private pendingDeletes = new Set<string>();
  private pendingHead: { modelVersion: number; builtAt: Date } | null = null;

  constructor(
    private readonly redis: RedisStore,
    private readonly probeIntervalMs = PROBE_INTERVAL_MS,
  ) {}

  get kind(): "redis" | "memory" {
    return this.fallback ? "memory" : "redis";
  }

  /** Whether this process is serving from its own copy because Redis failed. */
  get inFallback(): boolean {
    return this.fallback;
  }

  /** Connects to Redis; when it does not answer, starts in fallback (an empty copy). */
  async open(): Promise<this> {
    try {
      await this.redis.connect();
      emit("readmodel:store", { kind: "redis", fallback: false, error: null });
    } catch (err) {
      this.fail(err);
    }
    return this;
  }

  /**
   * While Redis fails, a key this process never read is unknown, not absent: that is an error
   * (the reader gets stale-if-error or 503), never a "no such story" or an empty list.
   */
  async get(key: string): Promise<Payload | null> {
    if (!this.fallback) {
      try {
        const found = await this.redis.get(key);
        if (found) await this.copy.put([found]);
        else await this.copy.delete([key]);
        return found;
      } catch (err) {
        this.suspect(err);
      }
    }
    const held = await this.copy.get(key);
    if (held) return held;
    throw new ReadModelUnavailableError(
      `Redis is failing and this process holds no copy of ${key}`,
    );
  }

  async put(payloads: readonly Payload[]): Promise<void> {
    await this.copy.put(payloads);
    if (!this.fallback) {
      try {
        await this.redis.put(payloads);
        return;
      } catch (err) {
        this.suspect(err);
      }
    }
    for (const p of payloads) {
      this.pending.set(p.key, p);
      this.pendingDeletes.delete(p.key);
    }
  }

  async delete(keys: readonly string[]): Promise<void> {
    await this.copy.delete(keys);
    if (!this.fallback) {
      try {
        await this.redis.delete(keys);
        return;
      } catch (err) {
        this.suspect(err);
      }
    }
    for (const key of keys) {
      this.pending.delete(key);
      this.pendingDeletes.add(key);
    }
  }

  async head(): Promise<{ modelVersion: number; builtAt: Date } | null> {
    if (this.fallback) return this.copy.head();
    try {
      const found = await this.redis.head();
      if (found) await this.copy.setHead(found);
      return found;
    } catch (err) {
      this.suspect(err);
      return this.copy.head();
    }
  }

  async setHead(head: { modelVersion: number; builtAt: Date }): Promise<void> {
    await this.copy.setHead(head);
    if (!this.fallback) {
      try {
        await this.redis.setHead(head);
        return;
      } catch (err) {
        this.suspect(err);
      }
    }
    if (!this.pendingHead || this.pendingHead.modelVersion < head.modelVersion) {
      this.pendingHead = head;
    }
  }

  /** In fallback every instance builds on its own: the lock is only this process's single-flight. */
  async lock(key: string, ttlMs: number): Promise<boolean> {
    if (this.fallback) return true;
    try {
      return await this.redis.lock(key, ttlMs);
    } catch (err) {
      this.suspect(err);
      return true;
    }
  }

  async unlock(key: string): Promise<void> {
    try {
      await this.redis.unlock(key);
    } catch {
      // The lock expires by itself (its PX); a reader never waits on an unlock.
    }
  }

  async close(): Promise<void> {
    if (this.probe) clearInterval(this.probe);
    this.probe = null;
    await this.redis.close();
  }

  private confirming = false;

  /**
   * A failed command is confirmed with a PING before the process switches: a 200 ms command
   * timeout also fires when this process's own event loop was busy past it (timers run before
   * the socket's replies are read), which a burst of a thousand requests in one tick does on a
   * loaded 2-core machine; Redis answering the PING sent after it means Redis is fine. A refused
   * connection fails the PING at once, a blackholed server after 200 ms.
   */
  private suspect(err: unknown): void {
    if (this.fallback || this.confirming) return;
    this.confirming = true;
    void this.redis
      .ping()
      .then(async (up) => {
        if (!up) return this.fail(err);
        await this.replay().catch(() => undefined);
      })
      .finally(() => {
        this.confirming = false;
      });
  }

  private fail(err: unknown): void {
    if (this.fallback) return;
    this.fallback = true;
    const message = (err as Error)?.message ?? String(err);
    logger().warn({ err: message }, "read model: Redis failed, serving from this process's copy");
    emit("readmodel:store", { kind: "memory", fallback: true, error: message.slice(0, 300) });
    this.probe = setInterval(() => void this.tryRecover(), this.probeIntervalMs);
    this.probe.unref();
  }

  private recovering = false;

  /**
   * What this process wrote while Redis failed goes there (newer-only writes, so an instance that
   * built a later version meanwhile is never rolled back).
   */
  private async replay(): Promise<void> {
    const pending = [...this.pending.values()];
    const deletes = [...this.pendingDeletes];
    const head = this.pendingHead;
    if (pending.length) await this.redis.put(pending);
    if (deletes.length) await this.redis.delete(deletes);
    if (head) await this.redis.setHead(head);
    for (const p of pending) if (this.pending.get(p.key) === p) this.pending.delete(p.key);
    for (const key of deletes) this.pendingDeletes.delete(key);
    if (this.pendingHead === head) this.pendingHead = null;
  }

  private async tryRecover(): Promise<void> {
    if (this.recovering || !this.fallback) return;
    this.recovering = true;
    try {
      if (!(await this.redis.ping())) return;
      await this.replay();
      if (this.probe) clearInterval(this.probe);
      this.probe = null;
      this.fallback = false;
      logger().info("read model: Redis answers again, serving from it");
      emit("readmodel:store", { kind: "redis", fallback: false, error: null });
    } catch {
      // Still failing (every store error is a ReadModelUnavailableError): the next probe tries.
    } finally {
      this.recovering = false;
    }
  }
}
