// The Dedup routes in-process: writes refused without an admin session (nothing changes,
// nothing is audited), allowed with one; bad input a 400 naming the field, an unknown id a
// 404, a conflicting state a 409.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadAdminState, SESSION_COOKIE, sealSession } from "@/lib/auth/session";
import type { Database } from "@/lib/db";
import { createTestDatabase, type TestDatabase } from "@/lib/testing/db";
import { linkItem } from "@/workers/dedup/clusters";
import { observe } from "@/workers/store";

const PASSWORD = "dedup-admin-password";
process.env.ADMIN_PASSWORD = PASSWORD;
process.env.DASHBOARD_READ = "open";

let db: TestDatabase;
let cookie: string;
const ORIGIN = "http://localhost:3000";

beforeAll(async () => {
  db = await createTestDatabase();
  (globalThis as unknown as { wirewatchDb?: Promise<Database> }).wirewatchDb = Promise.resolve(db);
  const state = await loadAdminState(db, PASSWORD);
  cookie = `${SESSION_COOKIE}=${encodeURIComponent(await sealSession(state))}`;
  for (const id of ["s1", "s2"]) {
    await db.prisma.source.create({ data: { id, name: id, kind: "stream" } });
  }
});
afterAll(async () => {
  await new Promise((r) => setTimeout(r, 200));
  await db?.drop();
});

function send(method: string, path: string, body: unknown, withCookie: boolean): Request {
  return new Request(`${ORIGIN}${path}`, {
    method,
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
const params = <T extends Record<string, string>>(p: T) => ({ params: Promise.resolve(p) });
const audits = () => db.prisma.adminAudit.count({ where: { action: { startsWith: "dedup." } } });

async function pair(): Promise<{ a: string; b: string; linkId: string }> {
  const keys: string[] = [];
  for (const s of ["s1", "s2"]) {
    const out = await observe(db, {
      sourceId: s,
      collector: "A",
      origin: "primary",
      guid: `g-${Math.random()}`,
      title: "Central bank raises rates",
    });
    keys.push(out.entryKey as string);
  }
  const [a, b] = keys as [string, string];
  const linked = await db.prisma.$transaction((tx) =>
    linkItem(tx, {
      entryKey: b,
      matchedKey: a,
      stage: "exact",
      score: 1,
      threshold: 1,
      settingsRevision: 1,
      itemVersion: 1,
      evidence: null,
    }),
  );
  return { a, b, linkId: linked.linkId };
}

describe("settings", () => {
  it("GET shows the defaults; PUT is refused without a session, 400 names the field, allowed audits", async () => {
    const { GET, PUT } = await import("./settings/route");
    const read = await (await GET(get("/api/dedup/settings"))).json();
    expect(read).toMatchObject({ revision: 1, origin: "default" });
    expect(read.thresholds).toEqual(read.defaults);
    const before = await audits();
    const denied = await PUT(
      send("PUT", "/api/dedup/settings", { thresholds: { windowHours: 24 } }, false),
    );
    expect(denied.status).toBe(401);
    expect(await audits()).toBe(before);
    const bad = await PUT(
      send("PUT", "/api/dedup/settings", { thresholds: { near: { review: 0.999 } } }, true),
    );
    expect(bad.status).toBe(400);
    expect((await bad.json()).error.message).toMatch(/^thresholds\.near\.review: /);
    const shape = await PUT(send("PUT", "/api/dedup/settings", { thresholds: 3 }, true));
    expect(shape.status).toBe(400);
    const ok = await PUT(
      send("PUT", "/api/dedup/settings", { thresholds: { windowHours: 24 } }, true),
    );
    expect(ok.status).toBe(200);
    expect(await ok.json()).toMatchObject({
      revision: 2,
      thresholds: { windowHours: 24 },
      auditId: expect.any(String),
    });
    const stale = await PUT(
      send("PUT", "/api/dedup/settings", { thresholds: {}, expectedRevision: 1 }, true),
    );
    expect(stale.status).toBe(409);
    expect((await stale.json()).error.code).toBe("stale_revision");
    expect(await audits()).toBe(before + 1);
  });
});

describe("links and reviews", () => {
  it("undo: 401 without a session, 200 with one, then 409; unknown 404; bad id 400", async () => {
    const { POST } = await import("./links/[id]/undo/route");
    const { linkId, b } = await pair();
    const path = `/api/dedup/links/${linkId}/undo`;
    const before = await audits();
    expect((await POST(send("POST", path, {}, false), params({ id: linkId }))).status).toBe(401);
    expect(await audits()).toBe(before);
    const ok = await POST(send("POST", path, {}, true), params({ id: linkId }));
    expect(ok.status).toBe(200);
    expect(await ok.json()).toMatchObject({ linkId, entryKey: b, dissolved: true });
    const again = await POST(send("POST", path, {}, true), params({ id: linkId }));
    expect([again.status, (await again.json()).error.code]).toEqual([409, "link_ended"]);
    expect((await POST(send("POST", "/x", {}, true), params({ id: "123456789" }))).status).toBe(
      404,
    );
    expect((await POST(send("POST", "/x", {}, true), params({ id: "abc" }))).status).toBe(400);
    expect(await audits()).toBe(before + 1);
  });

  it("reviews: listed; confirm and reject refused without a session, 409 once decided, 404 unknown", async () => {
    const { GET } = await import("./reviews/route");
    const { POST: confirm } = await import("./reviews/[id]/confirm/route");
    const { POST: reject } = await import("./reviews/[id]/reject/route");
    const { a, b } = await pair();
    await db.prisma.$transaction(async (tx) => {
      const { unlinkItem } = await import("@/workers/dedup/clusters");
      await unlinkItem(tx, b, "edited");
    });
    const [pa, pb] = a < b ? [a, b] : [b, a];
    const [row] = await db.prisma.$queryRaw<{ id: bigint }[]>`
      INSERT INTO dedup_reviews (entry_key, candidate_key, pair_a, pair_b, stage, score,
                                 threshold, item_version)
      VALUES (${b}, ${a}, ${pa}, ${pb}, 'near', 0.45, 0.54, 1) RETURNING id`;
    const id = String(row?.id);
    const list = await (await GET(get("/api/dedup/reviews?limit=10"))).json();
    expect(list.reviews.map((r: { id: string }) => r.id)).toContain(id);
    expect((await GET(get("/api/dedup/reviews?state=nope"))).status).toBe(400);
    const before = await audits();
    const path = `/api/dedup/reviews/${id}/confirm`;
    expect((await confirm(send("POST", path, {}, false), params({ id }))).status).toBe(401);
    expect((await reject(send("POST", path, {}, false), params({ id }))).status).toBe(401);
    expect(await audits()).toBe(before);
    const ok = await confirm(send("POST", path, {}, true), params({ id }));
    expect(ok.status).toBe(200);
    expect((await ok.json()).review.state).toBe("confirmed");
    const late = await reject(send("POST", path, {}, true), params({ id }));
    expect([late.status, (await late.json()).error.code]).toEqual([409, "review_decided"]);
    expect((await reject(send("POST", path, {}, true), params({ id: "77777" }))).status).toBe(404);
    expect(await audits()).toBe(before + 1);
  });
});

describe("runs", () => {
  it("POST refused without a session; a dry run starts (202) and finishes; its diff is readable; bad input 400", async () => {
    const { POST, GET } = await import("./runs/route");
    const { GET: one } = await import("./runs/[id]/route");
    const before = await db.prisma.$queryRaw<
      { n: number }[]
    >`SELECT count(*)::int AS n FROM dedup_runs`;
    expect((await POST(send("POST", "/api/dedup/runs", { dryRun: true }, false))).status).toBe(401);
    const after = await db.prisma.$queryRaw<
      { n: number }[]
    >`SELECT count(*)::int AS n FROM dedup_runs`;
    expect(after).toEqual(before);
    const bad = await POST(
      send("POST", "/api/dedup/runs", { dryRun: true, thresholds: { windowHours: 0 } }, true),
    );
    expect(bad.status).toBe(400);
    expect((await bad.json()).error.message).toMatch(/^thresholds\.windowHours/);
    expect((await POST(send("POST", "/api/dedup/runs", { dryRun: "yes" }, true))).status).toBe(400);
    expect((await POST(send("POST", "/api/dedup/runs", { applyRun: "424242" }, true))).status).toBe(
      404,
    );
    const res = await POST(send("POST", "/api/dedup/runs", { dryRun: true }, true));
    expect(res.status).toBe(202);
    const { runId } = await res.json();
    let state = "running";
    let body: { run: { state: string; dryRun: boolean }; changes: unknown[] } | null = null;
    for (let i = 0; i < 400 && state === "running"; i++) {
      body = await (await one(get(`/api/dedup/runs/${runId}`), params({ id: runId }))).json();
      state = body?.run.state ?? "running";
      if (state === "running") await new Promise((r) => setTimeout(r, 25));
    }
    expect(body?.run).toMatchObject({ state: "finished", dryRun: true });
    expect(Array.isArray(body?.changes)).toBe(true);
    const history = await (await GET(get("/api/dedup/runs"))).json();
    expect(history.runs[0]).toMatchObject({ id: runId, actor: "admin" });
    expect((await one(get("/api/dedup/runs/999999"), params({ id: "999999" }))).status).toBe(404);
    expect(
      (await one(get(`/api/dedup/runs/${runId}?change=x`), params({ id: runId }))).status,
    ).toBe(400);
    // The apply of an apply is refused; wait for the dry run's slot to free first.
    await new Promise((r) => setTimeout(r, 50));
    const applied = await POST(send("POST", "/api/dedup/runs", { applyRun: runId }, true));
    expect(applied.status).toBe(202);
    const applyId = (await applied.json()).runId;
    for (let i = 0; i < 400; i++) {
      const b = await (await one(get("/x"), params({ id: applyId }))).json();
      if (b.run.state !== "running" && !b.run.active) break;
      await new Promise((r) => setTimeout(r, 25));
    }
    const refused = await POST(send("POST", "/api/dedup/runs", { applyRun: applyId }, true));
    expect([refused.status, (await refused.json()).error.code]).toEqual([
      409,
      "not_a_finished_dry_run",
    ]);
  });
});
