import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { loadAdminState, SESSION_COOKIE, sealSession } from "@/lib/auth/session";
import { minutesBefore, seedSource } from "@/lib/dashboard/testing";
import { createTestDatabase, type TestDatabase } from "@/lib/testing/db";
import { POST as fetchNow } from "./[id]/fetch-now/route";
import { POST as pause } from "./[id]/pause/route";
import { POST as resume } from "./[id]/resume/route";
import { GET as getSource } from "./[id]/route";
import { GET as listSources } from "./route";

// The guard reads its settings through lib/config.ts, once: the password must be set first.
const PASSWORD = vi.hoisted(() => {
  process.env.ADMIN_PASSWORD = "correct horse battery staple";
  return process.env.ADMIN_PASSWORD;
});

let db: TestDatabase;
let cookie: string;
const ORIGIN = "http://localhost:3000";
const params = (id: string) => ({ params: Promise.resolve({ id }) });

function post(path: string, headers: Record<string, string> = {}) {
  return new Request(`${ORIGIN}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", origin: ORIGIN, ...headers },
    body: "{}",
  });
}

async function snapshot() {
  const [state, jobs, audit] = await Promise.all([
    db.prisma.sourceState.findUnique({ where: { sourceId: "s1" } }),
    db.prisma.job.findMany({ orderBy: { id: "asc" } }),
    db.prisma.adminAudit.count(),
  ]);
  return { state, jobs, audit };
}

beforeAll(async () => {
  db = await createTestDatabase();
  // Route handlers reach the database through getDb(): hand them this test's.
  (globalThis as unknown as { wirewatchDb?: Promise<unknown> }).wirewatchDb = Promise.resolve(db);
  const state = await loadAdminState(db, PASSWORD);
  cookie = `${SESSION_COOKIE}=${await sealSession(state)}`;
  await seedSource(db, "s1", { lastPolledAt: minutesBefore(new Date(), 1) });
  await db.prisma.job.create({
    data: {
      queue: "fetch",
      key: "s1/A",
      sourceId: "s1",
      runAt: new Date(Date.now() + 3_600_000),
    },
  });
});

afterAll(async () => {
  await db?.drop();
});

describe("source admin routes", () => {
  it("refuse without an admin session, cross-origin or without JSON, and change nothing", async () => {
    const before = await snapshot();
    for (const [route, path] of [
      [fetchNow, "/api/sources/s1/fetch-now"],
      [pause, "/api/sources/s1/pause"],
      [resume, "/api/sources/s1/resume"],
    ] as const) {
      const anonymous = await route(post(path), params("s1"));
      expect(anonymous.status).toBe(401);
      expect((await anonymous.json()).error.code).toBe("unauthorized");
      const crossSite = await route(
        post(path, { cookie, origin: "https://evil.test" }),
        params("s1"),
      );
      expect(crossSite.status).toBe(403);
      const forged = await route(post(path, { cookie: `${SESSION_COOKIE}=forged` }), params("s1"));
      expect(forged.status).toBe(401);
    }
    expect(await snapshot()).toEqual(before);
  });

  it("with an admin session: fetch now, pause and resume change the source and are audited", async () => {
    const due = await fetchNow(post("/api/sources/s1/fetch-now", { cookie }), params("s1"));
    expect(due.status).toBe(200);
    expect((await due.json()).result).toMatchObject({ affected: 1 });
    expect((await db.prisma.job.findFirstOrThrow()).runAt.getTime()).toBeLessThanOrEqual(
      Date.now(),
    );

    const paused = await pause(post("/api/sources/s1/pause", { cookie }), params("s1"));
    expect(paused.status).toBe(200);
    expect((await snapshot()).state?.disabledReason).toBe("paused by admin");
    expect(await db.prisma.job.count()).toBe(0);

    const page = await getSource(new Request(`${ORIGIN}/api/sources/s1`), params("s1"));
    expect((await page.json()).source).toMatchObject({
      paused: true,
      health: { state: "disabled" },
    });

    const resumed = await resume(post("/api/sources/s1/resume", { cookie }), params("s1"));
    expect(resumed.status).toBe(200);
    expect((await snapshot()).state?.disabledReason).toBeNull();

    const audit = await db.prisma.adminAudit.findMany({ orderBy: { id: "asc" } });
    expect(audit.map((a) => [a.actor, a.action, a.affected, a.target])).toEqual([
      ["admin", "sources.fetch_now", 1, { sourceId: "s1" }],
      ["admin", "sources.pause", 1, { sourceId: "s1" }],
      ["admin", "sources.resume", 1, { sourceId: "s1" }],
    ]);
  });

  it("answer 404 for an unknown source, and reads answer JSON", async () => {
    const missing = await pause(post("/api/sources/nope/pause", { cookie }), params("nope"));
    expect(missing.status).toBe(404);
    expect((await missing.json()).error.code).toBe("not_found");
    const list = await listSources(new Request(`${ORIGIN}/api/sources`));
    expect(list.status).toBe(200);
    expect((await list.json()).sources.map((s: { id: string }) => s.id)).toEqual(["s1"]);
    const bad = await getSource(new Request(`${ORIGIN}/api/sources/s1?limit=0`), params("s1"));
    expect(bad.status).toBe(400);
    expect((await bad.json()).error.code).toBe("bad_request");
  });
});
