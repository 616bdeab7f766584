import { config } from "../../config";
import { type Database, getDb } from "../../db";
import { emit } from "../../events";
import type { ReadModelStore } from "../types";
import { FallbackStore } from "./fallback";
import { MemoryStore } from "./memory";
import { RedisStore } from "./redis";
import { openPayloadTable } from "./table";

export { FallbackStore } from "./fallback";
export { MemoryStore } from "./memory";
export { RedisStore } from "./redis";

export interface OpenStoreOptions {
  /** Redis; absent: this process's memory backed by read_payloads. */
  redisUrl?: string;
  /** The Redis key prefix (tests give each store client its own). */
  prefix?: string;
  /** Redis command timeout (REDIS_COMMAND_TIMEOUT_MS, 200 ms, when absent). */
  commandTimeoutMs?: number;
  /** The database whose read_payloads backs the memory store (getDb() when absent). */
  db?: Database;
  /** PostgreSQL URL for the read pool (DATABASE_URL when absent; ignored on PGlite). */
  databaseUrl?: string;
  readPoolSize?: number;
  /** How often the memory store reads rows another process's builder wrote (the build interval). */
  refreshMs?: number;
}

/**
 * The store from configuration: Redis when REDIS_URL is set (falling back to this process's
 * memory while it fails), else memory loaded from read_payloads through the read pool.
 * Emits `readmodel:store` once with the store chosen, then on each change.
 */
export async function openReadModelStore(options: OpenStoreOptions = {}): Promise<ReadModelStore> {
  const settings = config();
  const redisUrl = "redisUrl" in options ? options.redisUrl : settings.REDIS_URL;
  if (redisUrl) {
    return new FallbackStore(
      new RedisStore(redisUrl, {
        prefix: options.prefix,
        commandTimeoutMs: options.commandTimeoutMs,
      }),
    ).open();
  }
  const db = options.db ?? (await getDb());
  const table = await openPayloadTable(
    db,
    "databaseUrl" in options ? options.databaseUrl : settings.DATABASE_URL,
    options.readPoolSize ?? settings.READ_POOL_SIZE,
  );
  const store = await MemoryStore.open(table).catch(async (err) => {
    await table.close();
    throw err;
  });
  store.startRefresh(options.refreshMs ?? settings.WIREWATCH_READ_MODEL_INTERVAL_MS);
  emit("readmodel:store", { kind: "memory", fallback: false, error: null });
  return store;
}
