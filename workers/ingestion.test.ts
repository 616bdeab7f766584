import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "@/lib/testing/db";
import { type Ingestion, startIngestion } from "./ingestion";

// What `npm start` does on the embedded default with nothing configured: the simulator starts
// inside the process and its news arrives. Settings are read once per process, so they are set
// before anything reads them. (On PostgreSQL the simulator is only started when asked: "on".)
process.env.WIREWATCH_SIMULATOR = "on";
process.env.SIMULATOR_PORT = "0";
process.env.WIREWATCH_CONFIG = "/nonexistent/wirewatch.config.json";

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

    await ingestion.stop();
    ingestion = undefined;
    const after = await db.prisma.collectorStatus.findMany({ where: { sourceId: "wire" } });
    expect(after.every((s) => !s.connected)).toBe(true);
  });
});
