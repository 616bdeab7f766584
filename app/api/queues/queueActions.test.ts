import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { loadAdminState, SESSION_COOKIE, sealSession } from "@/lib/auth/session";
import { createTestDatabase, type TestDatabase } from "@/lib/testing/db";
import { POST as pause } from "./[queue]/pause/route";
import { POST as resume } from "./[queue]/resume/route";
import { GET as getQueues } from "./route";

// The guard reads its settings through lib/config.ts, once: the password must be set first.
const PASSWORD = vi.hoisted(() => {
  process.env.ADMIN_PASSWORD = "correct horse battery staple";
  return process.env.ADMIN_PASSWORD;
});

let db: TestDatabase;
let cookie: string;
const ORIGIN = "http://localhost:3000";
const params = (queue: string) => ({ params: Promise.resolve({ queue }) });

function post(path: string, headers: Record<string, string> = {}) {
  return new Request(`${ORIGIN}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", origin: ORIGIN, ...headers },
    body: "{}",
  });
}

beforeAll(async () => {
  db = await createTestDatabase();
  (globalThis as unknown as { wirewatchDb?: Promise<unknown> }).wirewatchDb = Promise.resolve(db);
  const state = await loadAdminState(db, PASSWORD);
  cookie = `${SESSION_COOKIE}=${await sealSession(state)}`;
  await db.prisma.job.create({
    data: {
      queue: "fetch",
      key: "f1",
      attempts: 1,
      lastFailedAt: new Date(),
      lastError: { code: "http_5xx", message: "503" },
    },
  });
});

afterAll(async () => {
  await db?.drop();
});

describe("queue admin routes", () => {
  it("refuses a request without the admin's session and changes nothing", async () => {
    const res = await pause(post("/api/queues/fetch/pause"), params("fetch"));
    expect(res.status).toBe(401);
    expect(await db.prisma.adminAudit.count()).toBe(0);
  });

  it("pauses and resumes, audited; an unknown queue is a 404", async () => {
    const paused = await pause(post("/api/queues/fetch/pause", { cookie }), params("fetch"));
    expect(paused.status).toBe(200);
    expect((await paused.json()).result).toMatchObject({ affected: 1 });
    const resumed = await resume(post("/api/queues/fetch/resume", { cookie }), params("fetch"));
    expect((await resumed.json()).result).toMatchObject({ affected: 1, message: "resumed" });
    const missing = await pause(post("/api/queues/nope/pause", { cookie }), params("nope"));
    expect(missing.status).toBe(404);
    expect(await db.prisma.adminAudit.count()).toBe(2);
  });

  it("GET answers the throughput, the jobs waiting to retry and the paused queues", async () => {
    await pause(post("/api/queues/fetch/pause", { cookie }), params("fetch"));
    const res = await getQueues(new Request(`${ORIGIN}/api/queues?hours=1`));
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body.retrying.total).toBe(1);
    expect(body.retrying.jobs[0]).toMatchObject({
      queue: "fetch",
      key: "f1",
      error: "http_5xx: 503",
    });
    expect(body.paused.map((p: { queue: string }) => p.queue)).toEqual(["fetch"]);
    // The marker is not a queue of its own on the page.
    expect(body.queues.depth.map((d: { queue: string }) => d.queue)).toEqual(["fetch"]);
    expect(Array.isArray(body.flow)).toBe(true);
  });
});
