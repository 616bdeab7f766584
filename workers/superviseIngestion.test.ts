import { afterAll, describe, expect, it } from "vitest";
import { checkHealth } from "@/app/api/health/checkHealth";
import { type Database, openDatabase } from "@/lib/db";
import { ingestionStatus } from "@/lib/ingestionStatus";
import { sleep } from "@/lib/sleep";
import { privatePostgresOrSkip } from "@/lib/testing/privatePostgres";
import type { Supervisor } from "./superviseIngestion";

// This file stops and starts PostgreSQL, so it runs on a cluster of its own. The server reads
// its settings once, so they point at that cluster before anything reads them.
const cluster = await privatePostgresOrSkip(
  "the start-with-the-database-down test (workers/superviseIngestion.test.ts)",
);
if (cluster) process.env.DATABASE_URL = cluster.url();
process.env.WIREWATCH_WORKERS = "inline";
process.env.WIREWATCH_CONFIG = "none";
process.env.WIREWATCH_SIMULATOR = "off";

let supervisor: Supervisor | undefined;
let observer: Database | undefined;
afterAll(async () => {
  await supervisor?.stop();
  await observer?.close();
  await cluster?.destroy();
});

async function until(what: string, check: () => Promise<boolean> | boolean, timeoutMs: number) {
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    if (await Promise.resolve(check()).catch(() => false)) return;
    await sleep(100);
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
}

describe.skipIf(!cluster)("the server started while PostgreSQL is down (private cluster)", () => {
  // biome-ignore lint/style/noNonNullAssertion: skipped when there is no cluster
  const pg = cluster!;

  it("says so in health, then starts ingestion once the database is back", async () => {
    await pg.stop();
    const { startServer } = await import("@/instrumentation-node");
    supervisor = await startServer();
    expect(ingestionStatus()).toMatchObject({
      mode: "inline",
      state: "waiting_for_database",
      code: "database_unavailable",
    });
    const down = await checkHealth();
    expect(down.ok).toBe(false);
    expect(JSON.stringify(down.body)).not.toContain(String(pg.port));

    await sleep(3_000); // a few retries while it is down
    const started = Date.now();
    await pg.start();
    // Retries double from 1 s to 30 s; 3 s into the outage the next is at most 4 s away.
    await until(
      "ingestion running",
      () => {
        const status = ingestionStatus();
        return status?.mode === "inline" && status.state === "running";
      },
      30_000,
    );
    const tookMs = Date.now() - started;
    observer = await openDatabase({ url: pg.url(), poolSize: 1 });
    const workers = await observer.prisma.queueWorker.count({ where: { state: "running" } });
    expect(workers).toBe(1);
    expect((await checkHealth()).ok).toBe(true);
    console.info(`ingestion running ${tookMs} ms after PostgreSQL started`);
  });
});
