import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listAudit } from "@/lib/dashboard/audit";
import { getRepairRun, listRepairRuns } from "@/lib/dashboard/repairs";
import { createTestDatabase, type TestDatabase } from "@/lib/testing/db";
import { observe } from "@/workers/store";
import { RepairBusyError, startRepair } from "./repairs";

let db: TestDatabase;
let drifted: string;

beforeAll(async () => {
  db = await createTestDatabase();
  await db.prisma.source.create({ data: { id: "wire", name: "Wire", kind: "stream" } });
  const wire = { sourceId: "wire", collector: "A", origin: "primary" } as const;
  for (let i = 0; i < 3; i++) {
    const out = await observe(db, {
      ...wire,
      guid: `g-${i}`,
      title: `Story ${i}`,
      category: "markets",
    });
    if (i === 1) drifted = out.entryKey as string;
  }
  // An old writer's damage: the current row lost what its observation said.
  await db.prisma
    .$executeRaw`UPDATE news SET category = NULL, title = 'thin' WHERE entry_key = ${drifted}`;
});
afterAll(() => db?.drop());

async function finished(runId: string) {
  for (let i = 0; i < 400; i++) {
    const got = await getRepairRun(db, runId);
    if (got && got.run.status !== "running" && !got.run.active) return got;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`run ${runId} did not finish`);
}

describe("repairs", () => {
  it("dry run: finds the drifted row field by field, changes nothing, audits the start and the count", async () => {
    const { runId } = await startRepair(db, { dryRun: true, actor: "admin" });
    const done = await finished(runId);
    expect(done.run).toMatchObject({
      dryRun: true,
      status: "finished",
      rowsTotal: 3,
      rowsExamined: 3,
      rowsChanged: 1,
      changes: 1,
    });
    expect(done.changes).toEqual([
      {
        id: expect.any(String),
        entryKey: drifted,
        applied: false,
        diff: { title: { from: "thin", to: "Story 1" }, category: { from: null, to: "markets" } },
      },
    ]);
    const row = await db.prisma.news.findUniqueOrThrow({ where: { entryKey: drifted } });
    expect(row.title).toBe("thin");
    // The audit row is updated when the run ends; give the background a moment.
    await new Promise((r) => setTimeout(r, 100));
    const audit = await listAudit(db, { action: "repairs.dry_run" });
    expect(audit.entries[0]).toMatchObject({
      actor: "admin",
      dryRun: true,
      affected: 1,
      target: { runId },
    });
  });

  it("apply: rewrites the row; one run at a time", async () => {
    const [started, second] = await Promise.allSettled([
      startRepair(db, { dryRun: false, actor: "admin" }),
      startRepair(db, { dryRun: true, actor: "admin" }),
    ]);
    expect(second.status === "rejected" && second.reason).toBeInstanceOf(RepairBusyError);
    if (started.status !== "fulfilled") throw started.reason;
    const { runId } = started.value;
    const done = await finished(runId);
    expect(done.run).toMatchObject({ dryRun: false, status: "finished", rowsChanged: 1 });
    expect(done.changes[0]?.applied).toBe(true);
    const row = await db.prisma.news.findUniqueOrThrow({ where: { entryKey: drifted } });
    expect([row.title, row.category, row.lastResult]).toEqual(["Story 1", "markets", "repaired"]);
    const history = await listRepairRuns(db, { limit: 1 });
    expect(history.runs.map((r) => r.id)).toEqual([runId]);
    expect(history.nextBefore).toBe(runId);
    expect((await listRepairRuns(db, { before: runId })).runs).toHaveLength(1);
  });
});

describe("listAudit", () => {
  it("pages newest first and filters by action or prefix", async () => {
    for (const action of ["a.one", "a.two", "b.one"]) {
      await db.prisma.adminAudit.create({ data: { actor: "t", action } });
    }
    const first = await listAudit(db, { limit: 2 });
    expect(first.entries.map((e) => e.action)).toEqual(["b.one", "a.two"]);
    const next = await listAudit(db, { limit: 2, before: first.nextBefore as string });
    expect(next.entries[0]?.action).toBe("a.one");
    expect((await listAudit(db, { action: "a.*" })).entries.map((e) => e.action)).toEqual([
      "a.two",
      "a.one",
    ]);
    expect((await listAudit(db, { action: "a.one" })).entries).toHaveLength(1);
  });
});
