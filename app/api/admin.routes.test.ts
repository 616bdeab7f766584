// The admin routes end to end in-process: refused without an admin session (and nothing
// changes), allowed with one (the change happens and admin_audit says who did it).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadAdminState, SESSION_COOKIE, sealSession } from "@/lib/auth/session";
import type { Database } from "@/lib/db";
import { createTestDatabase, type TestDatabase } from "@/lib/testing/db";
import { makeDeadLetters } from "@/workers/queue/deadLetters/testing";

const PASSWORD = "e2e-admin-password";
process.env.ADMIN_PASSWORD = PASSWORD;
process.env.WIREWATCH_CHAOS = "on";
process.env.DASHBOARD_READ = "open";

let db: TestDatabase;
let cookie: string;
const ORIGIN = "http://localhost:3000";

beforeAll(async () => {
  db = await createTestDatabase();
  // The routes call getDb(): hand them this test's database.
  (globalThis as unknown as { wirewatchDb?: Promise<Database> }).wirewatchDb = Promise.resolve(db);
  const state = await loadAdminState(db, PASSWORD);
  cookie = `${SESSION_COOKIE}=${encodeURIComponent(await sealSession(state))}`;
});
afterAll(async () => {
  // Let a background repair's last write land before the database goes.
  await new Promise((r) => setTimeout(r, 200));
  await db?.drop();
});

function post(path: string, body: unknown, withCookie: boolean): Request {
  return new Request(`${ORIGIN}${path}`, {
    method: "POST",
    headers: {
      host: "localhost:3000",
      origin: ORIGIN,
      "content-type": "application/json",
      ...(withCookie ? { cookie } : {}),
    },
    body: JSON.stringify(body),
  });
}

const get = (path: string) =>
  new Request(`${ORIGIN}${path}`, { headers: { host: "localhost:3000" } });
const auditCount = () => db.prisma.adminAudit.count();
const deadCount = () => db.prisma.job.count({ where: { state: "dead" } });

describe("dead-letter routes", () => {
  let ids: string[];
  beforeAll(async () => {
    ids = await makeDeadLetters(db, "fetch", [
      { key: "s/1", sourceId: "s" },
      { key: "s/2", sourceId: "s" },
      { key: "s/3", sourceId: "s" },
    ]);
  });

  it("lists, groups and shows them to a reader", async () => {
    const { GET: list } = await import("./dead-letters/route");
    const page = await (await list(get("/api/dead-letters?stage=fetch&limit=2"))).json();
    expect(page.items.map((d: { id: string }) => d.id)).toEqual([ids[2], ids[1]]);
    expect(page.nextCursor).toBe(ids[1]);
    const { GET: groups } = await import("./dead-letters/groups/route");
    const stats = await (await groups(get("/api/dead-letters/groups?source=s"))).json();
    expect(stats.depth).toBe(3);
    // "failed <id>" with the id masked: one cause, one group.
    expect(stats.groups).toMatchObject([{ stage: "fetch", code: "E_TEST", count: 3 }]);
    const { GET: one } = await import("./dead-letters/[id]/route");
    const res = await one(get(`/api/dead-letters/${ids[0]}`), {
      params: Promise.resolve({ id: ids[0] as string }),
    });
    expect(res.status).toBe(200);
    expect((await res.json()).lastError.stack).toContain("Error");
    const bad = await list(get("/api/dead-letters?from=yesterday"));
    expect(bad.status).toBe(400);
  });

  it("requeue: refused without a session, nothing changes and nothing is audited", async () => {
    const { POST } = await import("./dead-letters/requeue/route");
    const before = [await deadCount(), await auditCount()];
    const res = await POST(post("/api/dead-letters/requeue", { filter: { ids: [ids[0]] } }, false));
    expect(res.status).toBe(401);
    expect([await deadCount(), await auditCount()]).toEqual(before);
  });

  it("requeue: a dry run counts, the real one requeues, both audited as the admin", async () => {
    const { POST } = await import("./dead-letters/requeue/route");
    const audits = await auditCount();
    const dry = await (
      await POST(
        post("/api/dead-letters/requeue", { filter: { ids: [ids[0]] }, dryRun: true }, true),
      )
    ).json();
    expect(dry).toMatchObject({ dryRun: true, matched: 1, requeued: 1 });
    expect(await deadCount()).toBe(3);
    const real = await (
      await POST(post("/api/dead-letters/requeue", { filter: { ids: [ids[0]] } }, true))
    ).json();
    expect(real).toMatchObject({ dryRun: false, requeued: 1, ids: [ids[0]] });
    expect(await deadCount()).toBe(2);
    const rows = await db.prisma.adminAudit.findMany({
      where: { id: { gt: BigInt(0) } },
      orderBy: { id: "desc" },
      take: 2,
    });
    expect(await auditCount()).toBe(audits + 2);
    expect(rows.map((r) => [r.actor, r.action, r.dryRun])).toEqual([
      ["admin", "dead_letters.requeue", false],
      ["admin", "dead_letters.requeue", true],
    ]);
  });

  it("requeue: refused into an open breaker unless forced", async () => {
    const { POST } = await import("./dead-letters/requeue/route");
    await db.prisma.source.create({ data: { id: "s", name: "S", kind: "feed" } });
    await db.prisma.$executeRaw`
      INSERT INTO source_state (source_id, breaker_state) VALUES ('s', 'open')
      ON CONFLICT (source_id) DO UPDATE SET breaker_state = 'open'`;
    const refused = await (
      await POST(post("/api/dead-letters/requeue", { filter: { ids: [ids[1]] } }, true))
    ).json();
    expect(refused).toMatchObject({ requeued: 0, refused: { "breaker open": 1 } });
    expect(await deadCount()).toBe(2);
    const forced = await (
      await POST(
        post("/api/dead-letters/requeue", { filter: { ids: [ids[1]] }, force: true }, true),
      )
    ).json();
    expect(forced).toMatchObject({ requeued: 1 });
    expect(await deadCount()).toBe(1);
  });

  it("an empty filter is refused unless all is said", async () => {
    const { POST } = await import("./dead-letters/discard/route");
    const res = await POST(post("/api/dead-letters/discard", { filter: {} }, true));
    expect(res.status).toBe(400);
    expect(await deadCount()).toBe(1);
  });

  it("discard: refused without a session; allowed archives and audits", async () => {
    const { POST } = await import("./dead-letters/discard/route");
    const audits = await auditCount();
    expect(
      (await POST(post("/api/dead-letters/discard", { filter: { ids: [ids[2]] } }, false))).status,
    ).toBe(401);
    expect([await deadCount(), await auditCount()]).toEqual([1, audits]);
    const res = await (
      await POST(post("/api/dead-letters/discard", { filter: { ids: [ids[2]] } }, true))
    ).json();
    expect(res).toMatchObject({ discarded: 1 });
    expect(await deadCount()).toBe(0);
    const last = await db.prisma.adminAudit.findFirstOrThrow({ orderBy: { id: "desc" } });
    expect([last.actor, last.action, last.affected]).toEqual(["admin", "dead_letters.discard", 1]);
  });
});

describe("requeue route: a dead letter whose key a live job holds", () => {
  it("is resolved by one requeue: archived as superseded by that job, audited, no longer counted", async () => {
    const { POST } = await import("./dead-letters/requeue/route");
    const [dead] = await makeDeadLetters(db, "frontier", [
      { key: "fetch:held:A", sourceId: "held" },
    ]);
    const live = await db.prisma.job.create({
      data: { queue: "frontier", key: "fetch:held:A", sourceId: "held" },
    });
    const res = await POST(post("/api/dead-letters/requeue", { filter: { ids: [dead] } }, true));
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({
      requeued: 0,
      superseded: 1,
      supersededBy: { [dead as string]: String(live.id) },
      refused: {},
    });
    expect(
      await db.prisma.job.findUniqueOrThrow({ where: { id: BigInt(dead as string) } }),
    ).toMatchObject({ state: "archived" });
    const last = await db.prisma.adminAudit.findFirstOrThrow({ orderBy: { id: "desc" } });
    expect(last).toMatchObject({
      actor: "admin",
      action: "dead_letters.requeue",
      affected: 1,
      detail: expect.objectContaining({
        superseded: [{ id: dead, by: String(live.id), reason: `superseded by job ${live.id}` }],
      }),
    });
    await db.prisma.job.delete({ where: { id: live.id } });
  });
});

describe("repair route", () => {
  it("refused without a session: no run, no audit; allowed: a run in the background and an audit row", async () => {
    const { POST, GET } = await import("./repairs/route");
    const audits = await auditCount();
    expect((await POST(post("/api/repairs", { dryRun: true }, false))).status).toBe(401);
    expect([await db.prisma.repairRun.count(), await auditCount()]).toEqual([0, audits]);
    const res = await POST(post("/api/repairs", { dryRun: true }, true));
    expect(res.status).toBe(202);
    const { runId } = await res.json();
    const { GET: one } = await import("./repairs/[id]/route");
    let status = "running";
    for (let i = 0; i < 200 && status === "running"; i++) {
      const run = await (
        await one(get(`/api/repairs/${runId}`), { params: Promise.resolve({ id: runId }) })
      ).json();
      status = run.run.status;
      await new Promise((r) => setTimeout(r, 25));
    }
    expect(status).toBe("finished");
    const history = await (await GET(get("/api/repairs"))).json();
    expect(history.runs[0]).toMatchObject({ id: runId, actor: "admin", dryRun: true });
    const last = await db.prisma.adminAudit.findFirstOrThrow({ orderBy: { id: "desc" } });
    expect([last.actor, last.action]).toEqual(["admin", "repairs.dry_run"]);
  });
});

describe("chaos route", () => {
  it("refused without a session; allowed sets a fault (and enqueues probes), clears; both audited", async () => {
    const { POST, GET } = await import("./chaos/route");
    const { listChaos, throwIfChaos } = await import("@/workers/chaos/chaos");
    const body = { action: "set", stage: "fetch", sourceId: "probe-src", probes: 2 };
    expect((await POST(post("/api/chaos", body, false))).status).toBe(401);
    expect(listChaos()).toEqual([]);
    const set = await (await POST(post("/api/chaos", body, true))).json();
    expect(set.fault).toMatchObject({ stage: "fetch", sourceId: "probe-src", permanent: true });
    expect(set.probeIds).toHaveLength(2);
    expect(() => throwIfChaos("fetch", "probe-src")).toThrow(/chaos: injected fetch fault/);
    expect(() => throwIfChaos("fetch", "other")).not.toThrow();
    expect((await (await GET(get("/api/chaos"))).json()).faults).toHaveLength(1);
    const cleared = await (await POST(post("/api/chaos", { action: "clear" }, true))).json();
    expect(cleared).toEqual({ cleared: 1 });
    expect(() => throwIfChaos("fetch", "probe-src")).not.toThrow();
    const actions = await db.prisma.adminAudit.findMany({
      where: { action: { startsWith: "chaos." } },
      orderBy: { id: "asc" },
    });
    expect(actions.map((a) => [a.actor, a.action, a.affected])).toEqual([
      ["admin", "chaos.set", 2],
      ["admin", "chaos.clear", 1],
    ]);
  });
});

describe("chaos probes", () => {
  it("tell a probe that ran and succeeded (gone, one claim more than failures) from one still due", async () => {
    const { POST, GET } = await import("./chaos/route");
    const { enqueueChaosProbes } = await import("@/workers/chaos/chaos");
    const { claim } = await import("@/workers/queue/claim");
    const { complete } = await import("@/workers/queue/complete");
    const { fail } = await import("@/workers/queue/fail");
    const { toJobError } = await import("@/workers/queue/jobError");
    const { release } = await import("@/workers/queue/release");
    const [done, failed, waiting] = await enqueueChaosProbes(db, "fate-src", 3);
    const claimed = await claim(db, "fetch", "w", 10, 30);
    const byId = new Map(claimed.map((c) => [c.lease.id, c]));
    const failedJob = byId.get(failed as string);
    const doneJob = byId.get(done as string);
    const waitingJob = byId.get(waiting as string);
    if (!failedJob || !doneJob || !waitingJob) throw new Error("probes not claimed");
    await fail(db, "w", failedJob, toJobError(new Error("chaos")));
    await complete(db, [doneJob.lease]);
    // The third is handed back unrun, as a stopping worker does.
    await release(db, "w", [waitingJob.lease]);
    const res = await GET(get(`/api/chaos?probes=${done},${failed},${waiting}`));
    expect(res.status).toBe(200);
    expect((await res.json()).probes).toEqual([
      { id: done, state: "done", claims: 1, failures: 0 },
      { id: failed, state: "dead", claims: 1, failures: 1 },
      { id: waiting, state: "ready", claims: 1, failures: 0 },
    ]);
    expect((await GET(get("/api/chaos?probes=1,x"))).status).toBe(400);
    await POST(post("/api/chaos", { action: "clear" }, true));
  });
});

describe("read routes", () => {
  it("items and audit answer with their shapes; bad input is a 400", async () => {
    const { GET: items } = await import("./items/route");
    const page = await (await items(get("/api/items?q=x"))).json();
    expect(page).toMatchObject({ items: [], nextCursor: null, scanWindow: 20_000 });
    expect((await items(get("/api/items?cursor=zzz"))).status).toBe(400);
    const { GET: item } = await import("./items/[key]/route");
    const key = "a".repeat(64);
    expect(
      (await item(get(`/api/items/${key}`), { params: Promise.resolve({ key }) })).status,
    ).toBe(404);
    const { GET: audit } = await import("./audit/route");
    const log = await (await audit(get("/api/audit?action=chaos.*&limit=1"))).json();
    expect(log.entries).toHaveLength(1);
    expect(log.nextBefore).not.toBeNull();
  });
});
