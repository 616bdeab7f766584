import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listSources, PAUSED_REASON } from "@/lib/dashboard/sources";
import { seedDownAndFine, seedSource } from "@/lib/dashboard/testing";
import { createTestDatabase, type TestDatabase } from "@/lib/testing/db";
import { parseSourcesFile } from "@/workers/sources/sourcesFile";
import { syncSources } from "@/workers/sources/syncSources";
import { syncFrontier } from "@/workers/stages/frontier";
import { fetchSourceNow, pauseSource, resumeSource } from "./sources";

let db: TestDatabase;
const now = new Date();

beforeAll(async () => {
  db = await createTestDatabase();
  await seedDownAndFine(db, now);
});

afterAll(async () => {
  await db?.drop();
});

describe("admin actions", () => {
  it("fetch now makes the source's waiting fetch jobs due, audited", async () => {
    await db.prisma.job.create({
      data: {
        queue: "fetch",
        key: "fine/A",
        sourceId: "fine",
        runAt: new Date(now.getTime() + 3_600_000),
      },
    });
    await db.prisma.job.create({
      data: {
        queue: "fetch",
        key: "down/A",
        sourceId: "down",
        runAt: new Date(now.getTime() + 3_600_000),
      },
    });
    const r = await fetchSourceNow(db, "fine", "tester");
    expect(r?.affected).toBe(1);
    const jobs = await db.prisma.job.findMany({ orderBy: { id: "asc" } });
    expect(jobs[0]?.runAt.getTime()).toBeLessThanOrEqual(Date.now());
    expect(jobs[1]?.runAt.getTime()).toBeGreaterThan(Date.now());
    const audit = await db.prisma.adminAudit.findFirst({ where: { id: BigInt(r?.auditId ?? 0) } });
    expect(audit).toMatchObject({ actor: "tester", action: "sources.fetch_now", affected: 1 });
    expect(audit?.target).toEqual({ sourceId: "fine" });
    expect(await fetchSourceNow(db, "nope", "tester")).toBeNull();
  });

  it("fetch now on a story-api source makes its catch-up due, not its webhook events", async () => {
    await db.prisma.source.create({
      data: { id: "desk", name: "Desk", kind: "story-api", url: "https://api.example/" },
    });
    const later = new Date(now.getTime() + 3_600_000);
    await db.prisma.job.createMany({
      data: [
        { queue: "story", key: "catchup:desk", sourceId: "desk", runAt: later },
        { queue: "story", key: "event:desk/evt_1", sourceId: "desk", runAt: later },
      ],
    });
    const r = await fetchSourceNow(db, "desk", "tester");
    expect(r).toMatchObject({ affected: 1, message: "1 job(s) due now (poll or catch-up)" });
    const due = await db.prisma.job.findMany({
      where: { sourceId: "desk", runAt: { lte: new Date() } },
    });
    expect(due.map((j) => j.key)).toEqual(["catchup:desk"]);
    // Paused, it has no catch-up waiting; its queued webhook events stay to be applied.
    await pauseSource(db, "desk", "tester");
    const left = await db.prisma.job.findMany({ where: { sourceId: "desk" } });
    expect(left.map((j) => j.key)).toEqual(["event:desk/evt_1"]);
    expect((await syncFrontier(db)).story).not.toContain("catchup:desk");
  });

  it("pause stops the frontier and survives a sources-file sync; resume brings it back", async () => {
    await db.prisma.job.deleteMany({});
    const file = parseSourcesFile(
      JSON.stringify({
        sources: [
          {
            id: "synced",
            name: "Synced",
            kind: "feed",
            url: "http://example.test/synced.xml",
            pollIntervalSeconds: 60,
            collectors: ["A", "B"],
          },
        ],
      }),
    );
    await syncSources(db, file);
    await syncFrontier(db);
    expect(await db.prisma.job.count({ where: { sourceId: "synced" } })).toBe(2);

    const paused = await pauseSource(db, "synced", "tester");
    expect(paused?.affected).toBe(1);
    expect(await db.prisma.job.count({ where: { sourceId: "synced" } })).toBe(0);

    await syncSources(db, file);
    await syncFrontier(db);
    const state = await db.prisma.sourceState.findUnique({ where: { sourceId: "synced" } });
    expect(state?.disabledReason).toBe(PAUSED_REASON);
    expect(await db.prisma.job.count({ where: { sourceId: "synced" } })).toBe(0);
    const [row] = (await listSources(db, { q: "synced" }, now)).sources.filter(
      (s) => s.id === "synced",
    );
    expect(row).toMatchObject({ paused: true, health: { state: "disabled" } });

    expect((await pauseSource(db, "synced", "tester"))?.affected).toBe(0);
    const resumed = await resumeSource(db, "synced", "tester");
    expect(resumed?.affected).toBe(1);
    expect(await db.prisma.job.count({ where: { sourceId: "synced" } })).toBe(2);

    const actions = await db.prisma.adminAudit.findMany({
      where: { target: { equals: { sourceId: "synced" } } },
      orderBy: { id: "asc" },
    });
    expect(actions.map((a) => [a.action, a.affected])).toEqual([
      ["sources.pause", 1],
      ["sources.pause", 0],
      ["sources.resume", 1],
    ]);
  });

  it("resume leaves a source disabled by a 410 alone", async () => {
    await seedSource(db, "gone", { disabledReason: "http_410", disabledAt: now });
    expect((await resumeSource(db, "gone", "tester"))?.affected).toBe(0);
    expect((await pauseSource(db, "gone", "tester"))?.message).toContain("http_410");
    const state = await db.prisma.sourceState.findUnique({ where: { sourceId: "gone" } });
    expect(state?.disabledReason).toBe("http_410");
  });
});
