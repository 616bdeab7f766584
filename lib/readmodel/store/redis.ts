import { randomBytes } from "node:crypto";
import Redis from "ioredis";
import { type Payload, type ReadModelStore, ReadModelUnavailableError } from "../types";

type Head = { modelVersion: number; builtAt: Date };

/**
 * Every command gives up after 200 ms: a reader waits on Redis at most that long before the
 * fallback answers from this process's copy (store/fallback.ts). A healthy local Redis answers a
 * 20 KB page in ~0.2 ms, so 200 ms is only ever a dead or blackholed server. Commands are never
 * queued while disconnected (enableOfflineQueue false): a request must fail at once, not wait
 * for a reconnect, and never be retried (maxRetriesPerRequest 0) behind the caller's back.
 */
export const REDIS_COMMAND_TIMEOUT_MS = 200;

/**
 * Reconnects after 100 ms, growing by 100 ms to 2 s: a restarted Redis is back in use within
 * 2 s, and a dead one costs one connect attempt every 2 s.
 */
const retryStrategy = (times: number) => Math.min(times * 100, 2_000);

/**
 * A payload is one hash: v (model version), e (ETag), b (the bytes), t (built at, ms). Written
 * by a script so "a newer version replaces an older one only" holds between instances: a read of
 * v and a write in two round trips would let two builders' late writes roll a key back.
 */
const PUT_IF_NEWER = `
local v = redis.call('HGET', KEYS[1], 'v')
if v and tonumber(v) > tonumber(ARGV[1]) then return 0 end
redis.call('HSET', KEYS[1], 'v', ARGV[1], 'e', ARGV[2], 'b', ARGV[3], 't', ARGV[4])
return 1`;

/** The head, only ever forward. */
const HEAD_IF_NEWER = `
local v = redis.call('HGET', KEYS[1], 'v')
if v and tonumber(v) >= tonumber(ARGV[1]) then return 0 end
redis.call('HSET', KEYS[1], 'v', ARGV[1], 't', ARGV[2])
return 1`;

/** Only the holder's token releases a lock (one that expired and was taken again is not ours). */
const UNLOCK_IF_OURS = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`;

type Scripted = Redis & {
  putIfNewer(key: string, v: number, e: string, b: Buffer, t: number): Promise<number>;
  headIfNewer(key: string, v: number, t: number): Promise<number>;
  unlockIfOurs(key: string, token: string): Promise<number>;
};

export interface RedisStoreOptions {
  /** Prefix of every key ("wirewatch:rm:"), so one Redis can hold several deployments. */
  prefix?: string;
  commandTimeoutMs?: number;
}

/** The model in Redis (REDIS_URL): shared by every app instance, with a lock per missing key. */
export class RedisStore implements ReadModelStore {
  readonly kind = "redis" as const;
  private readonly client: Scripted;
  private readonly prefix: string;
  /** This instance's lock tokens by key: random, so no other holder can release ours. */
  private readonly tokens = new Map<string, string>();

  constructor(url: string, options: RedisStoreOptions = {}) {
    const timeout = options.commandTimeoutMs ?? REDIS_COMMAND_TIMEOUT_MS;
    this.prefix = options.prefix ?? "wirewatch:rm:";
    this.client = new Redis(url, {
      commandTimeout: timeout,
      connectTimeout: Math.max(timeout, 1_000),
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      retryStrategy,
      lazyConnect: true,
    }) as Scripted;
    // Connection errors are seen by the commands that fail; an unheard 'error' would end the
    // process.
    this.client.on("error", () => undefined);
    this.client.defineCommand("putIfNewer", { numberOfKeys: 1, lua: PUT_IF_NEWER });
    this.client.defineCommand("headIfNewer", { numberOfKeys: 1, lua: HEAD_IF_NEWER });
    this.client.defineCommand("unlockIfOurs", { numberOfKeys: 1, lua: UNLOCK_IF_OURS });
  }

  /** Connects; throws ReadModelUnavailableError when Redis does not answer (reconnects go on). */
  async connect(): Promise<void> {
    await this.call("connect", async () => {
      if (this.client.status === "wait") await this.client.connect();
      await this.client.ping();
    });
  }

  async get(key: string): Promise<Payload | null> {
    const [v, e, b, t] = await this.call("get", () =>
      this.client.hmgetBuffer(this.prefix + key, "v", "e", "b", "t"),
    );
    if (!v || !e || !b || !t) return null;
    return {
      key,
      modelVersion: Number(v.toString()),
      etag: e.toString(),
      body: b,
      builtAt: new Date(Number(t.toString())),
    };
  }

  async put(payloads: readonly Payload[]): Promise<void> {
    if (payloads.length === 0) return;
    await this.call("put", async () => {
      const pipeline = this.client.pipeline() as unknown as {
        putIfNewer(key: string, v: number, e: string, b: Buffer, t: number): void;
        exec(): Promise<[Error | null, unknown][] | null>;
      };
      for (const p of payloads) {
        pipeline.putIfNewer(this.prefix + p.key, p.modelVersion, p.etag, p.body, +p.builtAt);
      }
      throwFirst(await pipeline.exec());
    });
  }

  async delete(keys: readonly string[]): Promise<void> {
    if (keys.length === 0) return;
    await this.call("delete", () => this.client.del(...keys.map((k) => this.prefix + k)));
  }

  async head(): Promise<Head | null> {
    const [v, t] = await this.call("head", () =>
      this.client.hmget(`${this.prefix}#head`, "v", "t"),
    );
    if (!v || !t) return null;
    return { modelVersion: Number(v), builtAt: new Date(Number(t)) };
  }

  async setHead(head: Head): Promise<void> {
    await this.call("setHead", () =>
      this.client.headIfNewer(`${this.prefix}#head`, head.modelVersion, +head.builtAt),
    );
  }

  async lock(key: string, ttlMs: number): Promise<boolean> {
    const token = randomBytes(12).toString("base64url");
    const ok = await this.call("lock", () =>
      this.client.set(`${this.prefix}#lock:${key}`, token, "PX", ttlMs, "NX"),
    );
    if (ok !== "OK") return false;
    this.tokens.set(key, token);
    return true;
  }

  async unlock(key: string): Promise<void> {
    const token = this.tokens.get(key);
    if (!token) return;
    this.tokens.delete(key);
    await this.call("unlock", () => this.client.unlockIfOurs(`${this.prefix}#lock:${key}`, token));
  }

  /** Answers whether Redis is reachable now (the fallback's probe). */
  async ping(): Promise<boolean> {
    try {
      if (this.client.status === "wait") await this.client.connect();
      return (await this.client.ping()) === "PONG";
    } catch {
      return false;
    }
  }

  async close(): Promise<void> {
    this.client.disconnect();
  }

  private async call<T>(what: string, run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (err) {
      throw new ReadModelUnavailableError(`redis ${what}: ${(err as Error).message}`, {
        cause: err,
      });
    }
  }
}

function throwFirst(results: [Error | null, unknown][] | null): void {
  const failed = results?.find(([err]) => err);
  if (failed?.[0]) throw failed[0];
}
