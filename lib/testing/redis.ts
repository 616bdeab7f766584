import { execFile } from "node:child_process";
import { createServer } from "node:net";
import { promisify } from "node:util";
import Redis from "ioredis";

const run = promisify(execFile);

/** The machine's Redis for tests, a database number of the caller's own. */
export const TEST_REDIS = "redis://127.0.0.1:6379";

/** Whether a Redis answers at `url`; says loudly why tests are skipped when none does. */
export async function requireRedis(what: string, url = TEST_REDIS): Promise<boolean> {
  const client = new Redis(url, {
    lazyConnect: true,
    connectTimeout: 500,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  client.on("error", () => undefined);
  try {
    await client.connect();
    await client.ping();
    return true;
  } catch {
    console.warn(`\n⚠ SKIPPED: ${what} needs Redis at ${url} (redis-server is not running).\n`);
    return false;
  } finally {
    client.disconnect();
  }
}

/** Empties one database of the test Redis (never the whole server: other files use others). */
export async function flushRedisDb(url: string): Promise<void> {
  const client = new Redis(url, { maxRetriesPerRequest: 0 });
  try {
    await client.flushdb();
  } finally {
    client.disconnect();
  }
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const port = (server.address() as { port: number }).port;
      server.close(() => resolve(port));
    });
  });
}

/** A redis-server of the test's own (no persistence) on a free port, to stop and start at will. */
export async function startOwnRedis(port?: number): Promise<{
  url: string;
  port: number;
  stop(): Promise<void>;
}> {
  const chosen = port ?? (await freePort());
  await run("redis-server", [
    "--port",
    String(chosen),
    "--bind",
    "127.0.0.1",
    "--save",
    "",
    "--appendonly",
    "no",
    "--daemonize",
    "yes",
  ]);
  const url = `redis://127.0.0.1:${chosen}`;
  for (let i = 0; i < 50; i++) {
    const answer = await run("redis-cli", ["-p", String(chosen), "ping"]).catch(() => null);
    if (answer?.stdout.includes("PONG")) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    url,
    port: chosen,
    stop: async () => {
      await run("redis-cli", ["-p", String(chosen), "shutdown", "nosave"]).catch(() => undefined);
    },
  };
}
