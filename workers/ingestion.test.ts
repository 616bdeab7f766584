import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "@/lib/testing/db";
import { type Ingestion, reclaimAbandonedLeases, startIngestion } from "./ingestion";
import { holdLeases } from "./queue/testing/seed";

// What `npm start` does on the embedded default with nothing configured: the simulator starts
// inside the process and its news arrives. Settings are read once per process, so they are set
// before anything reads them. (On PostgreSQL the simulator is only started when asked: "on".)
process.env.WIREWATCH_SIMULATOR = "on";
process.env.SIMULATOR_PORT = "0";
process.env.WIREWATCH_CONFIG = "none";

let db: TestDatabase;
let ingestion: Ingestion | undefined;

beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await ingestion?.stop();
  await db?.drop();
});

describe("ingestion with nothing configured", () => {
  it("starts the simulator, syncs its sources and brings its news in within seconds", async () => {
    ingestion = await startIngestion(db);
    expect(ingestion.simulator).not.toBeNull();
    const sources = await db.prisma.source.findMany({ where: { enabled: true } });
    expect(sources.map((s) => s.kind).sort()).toEqual(
      expect.arrayContaining(["feed", "page", "stream"]),
    );

    const deadline = Date.now() + 30_000;
    let kinds: string[] = [];
    while (Date.now() < deadline) {
      const rows = await db.prisma.news.groupBy({ by: ["sourceId"], _count: { _all: true } });
      kinds = rows.map((r) => r.sourceId);
      if (kinds.includes("wire") && kinds.some((k) => k.endsWith("-rss"))) break;
      await new Promise((r) => setTimeout(r, 250));
    }
    expect(kinds).toContain("wire");
    expect(kinds.some((k) => k.endsWith("-rss"))).toBe(true);
    const statuses = await db.prisma.collectorStatus.findMany({ where: { sourceId: "wire" } });
    expect(statuses.map((s) => s.collector).sort()).toEqual(["A", "B"]);

    // The line extracts what survives dedup by the simulator's chat model (llm → local), costed.
    let extracted: { provider: string; model: string; cost_usd: number }[] = [];
    const until = Date.now() + 90_000;
    while (Date.now() < until) {
      extracted = await db.prisma.$queryRaw`
        SELECT provider, model, cost_usd FROM item_extractions WHERE provider = 'llm' LIMIT 1`;
      if (extracted.length > 0) break;
      await new Promise((r) => setTimeout(r, 500));
    }
    expect(extracted[0]).toMatchObject({ provider: "llm", model: "sim-extract-1" });
    expect(extracted[0]?.cost_usd).toBeGreaterThan(0);

    // The line ends in the index stage and the builder makes read model versions of its stories.
    let built: { stories: number; error: string | null }[] = [];
    const byBuild = Date.now() + 30_000;
    while (Date.now() < byBuild) {
      built = await db.prisma.$queryRaw`
        SELECT stories, error FROM read_model_builds WHERE stories > 0 ORDER BY id LIMIT 1`;
      if (built.length > 0) break;
      await new Promise((r) => setTimeout(r, 250));
    }
    expect(built[0]).toMatchObject({ error: null });
    expect(built[0]?.stories).toBeGreaterThan(0);

    await ingestion.stop();
    ingestion = undefined;
    const after = await db.prisma.collectorStatus.findMany({ where: { sourceId: "wire" } });
    expect(after.every((s) => !s.connected)).toBe(true);
    expect(await db.prisma.job.count({ where: { state: "leased" } })).toBe(0);
  });

  it("takes back at once the leases a previous run on the embedded database left behind", async () => {
    // A run that exited without handing its stream back (the web server exits on SIGTERM).
    await holdLeases(db, { queue: "stream", owner: "old-run", seconds: 3600 });
    await db.prisma.queueWorker.create({
      data: { id: "old-run", host: "h", pid: 1, queues: ["stream"] },
    });
    // What startIngestion does first on PGlite, where the data directory lock guarantees that
    // no other process is running.
    await reclaimAbandonedLeases(db);
    expect(await db.prisma.job.count({ where: { state: "leased" } })).toBe(0);
    const streams = await db.prisma.job.findMany({ where: { queue: "stream" } });
    expect(streams.length).toBeGreaterThan(0);
    expect(streams.every((j) => j.state === "ready" && j.runAt <= new Date())).toBe(true);
    const old = await db.prisma.queueWorker.findUniqueOrThrow({ where: { id: "old-run" } });
    expect(old.state).toBe("stopped");
    const expired = await db.prisma.leaseEvent.count({
      where: { workerId: "old-run", kind: "expired" },
    });
    expect(expired).toBe(streams.length);
  });
});
