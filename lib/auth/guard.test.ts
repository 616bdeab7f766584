import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createTestDatabase, type TestDatabase } from "../testing/db";
import { type AuthContext, adminStatus, requireAdmin, requireReader } from "./guard";
import {
  loadAdminState,
  revokeAllSessions,
  SESSION_COOKIE,
  SESSION_TTL_SECONDS,
  sealSession,
} from "./session";

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(() => db?.drop());

const ORIGIN = "http://localhost:3000";
const PASSWORD = "correct horse battery";

function ctx(over: Partial<AuthContext> = {}): AuthContext {
  return { db, adminPassword: PASSWORD, dashboardRead: "open", ...over };
}

function mutation(headers: Record<string, string> = {}, method = "POST"): Request {
  return new Request(`${ORIGIN}/api/anything`, {
    method,
    headers: {
      host: "localhost:3000",
      origin: ORIGIN,
      "content-type": "application/json",
      ...headers,
    },
    body: "{}",
  });
}

async function validCookie(now = Date.now()): Promise<string> {
  const state = await loadAdminState(db, PASSWORD);
  return `${SESSION_COOKIE}=${encodeURIComponent(await sealSession(state, now))}`;
}

async function errorOf(result: unknown): Promise<{ status: number; code: string }> {
  expect(result).toBeInstanceOf(Response);
  const res = result as Response;
  const body = (await res.json()) as { error: { code: string } };
  return { status: res.status, code: body.error.code };
}

describe("requireAdmin", () => {
  it("allows a same-origin JSON mutation with a valid session", async () => {
    const cookie = await validCookie();
    expect(await requireAdmin(mutation({ cookie }), ctx())).toEqual({ actor: "admin" });
    // Sec-Fetch-Site: same-origin stands in for a missing Origin.
    const { origin: _, ...rest } = { origin: "", "sec-fetch-site": "same-origin", cookie };
    const req = new Request(`${ORIGIN}/api/x`, {
      method: "POST",
      headers: {
        host: "localhost:3000",
        "content-type": "application/json; charset=utf-8",
        ...rest,
      },
      body: "{}",
    });
    expect(await requireAdmin(req, ctx())).toEqual({ actor: "admin" });
  });

  it("refuses without a session (401), with a bad or old cookie too", async () => {
    expect(await errorOf(await requireAdmin(mutation(), ctx()))).toEqual({
      status: 401,
      code: "unauthorized",
    });
    const forged = `${SESSION_COOKIE}=Fe26.2**not-a-seal`;
    expect((await errorOf(await requireAdmin(mutation({ cookie: forged }), ctx()))).status).toBe(
      401,
    );
  });

  it("refuses a missing, foreign or null Origin, and cross-site fetches (403)", async () => {
    const cookie = await validCookie();
    const cases: Record<string, string>[] = [
      { origin: "" },
      { origin: "null" },
      { origin: "https://evil.example" },
      { origin: "http://localhost:3001" },
      { origin: ORIGIN, "sec-fetch-site": "cross-site" },
      { origin: "", "sec-fetch-site": "same-site" },
    ];
    for (const headers of cases) {
      const req = mutation({ cookie, ...headers });
      if (!headers.origin) req.headers.delete("origin");
      expect(await errorOf(await requireAdmin(req, ctx())), JSON.stringify(headers)).toEqual({
        status: 403,
        code: "cross_origin",
      });
    }
  });

  it("refuses a body that is not declared JSON (415)", async () => {
    const cookie = await validCookie();
    for (const type of ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data"]) {
      expect(
        await errorOf(await requireAdmin(mutation({ cookie, "content-type": type }), ctx())),
      ).toEqual({ status: 415, code: "unsupported_media_type" });
    }
    const none = mutation({ cookie });
    none.headers.delete("content-type");
    expect((await errorOf(await requireAdmin(none, ctx()))).status).toBe(415);
  });

  it("checks the session but not Origin or Content-Type on a GET", async () => {
    const get = new Request(`${ORIGIN}/api/x`, { headers: { host: "localhost:3000" } });
    expect((await errorOf(await requireAdmin(get, ctx()))).status).toBe(401);
    get.headers.set("cookie", await validCookie());
    expect(await requireAdmin(get, ctx())).toEqual({ actor: "admin" });
  });

  it("ends sessions on revoke and on a password change", async () => {
    const cookie = await validCookie();
    expect(await requireAdmin(mutation({ cookie }), ctx())).toEqual({ actor: "admin" });
    await revokeAllSessions(db);
    expect((await errorOf(await requireAdmin(mutation({ cookie }), ctx()))).status).toBe(401);

    const fresh = await validCookie();
    expect(await requireAdmin(mutation({ cookie: fresh }), ctx())).toEqual({ actor: "admin" });
    const changed = ctx({ adminPassword: "another password entirely" });
    expect((await errorOf(await requireAdmin(mutation({ cookie: fresh }), changed))).status).toBe(
      401,
    );
  });

  it("ends a session 12 hours after login however it is used", async () => {
    expect(SESSION_TTL_SECONDS).toBe(12 * 60 * 60);
    const loginAt = Date.now();
    const cookie = await validCookie(loginAt);
    const ttl = SESSION_TTL_SECONDS * 1000;
    expect(await requireAdmin(mutation({ cookie }), ctx({ now: loginAt + ttl - 1000 }))).toEqual({
      actor: "admin",
    });
    expect(
      (await errorOf(await requireAdmin(mutation({ cookie }), ctx({ now: loginAt + ttl + 1 }))))
        .status,
    ).toBe(401);
    // The seal's own TTL agrees (iron-session checks Date.now()).
    vi.useFakeTimers({ toFake: ["Date"], now: loginAt + ttl + 120_000 });
    try {
      expect((await errorOf(await requireAdmin(mutation({ cookie }), ctx()))).status).toBe(401);
    } finally {
      vi.useRealTimers();
    }
  });

  it("without a password: loopback only on the embedded database, never on PostgreSQL", async () => {
    const noPassword = ctx({ adminPassword: undefined });
    const embedded = { ...noPassword, db: { ...db, kind: "pglite" as const } };
    const postgres = { ...noPassword, db: { ...db, kind: "postgres" as const } };
    expect(await requireAdmin(mutation(), embedded)).toEqual({ actor: "loopback" });
    expect(await requireAdmin(mutation({ "x-forwarded-for": "::1" }), embedded)).toEqual({
      actor: "loopback",
    });
    expect(await requireAdmin(mutation({ "x-forwarded-for": "127.0.0.1" }), embedded)).toEqual({
      actor: "loopback",
    });
    // From another machine, or sent to a non-loopback host name (DNS rebinding).
    expect(
      await errorOf(await requireAdmin(mutation({ "x-forwarded-for": "192.168.1.20" }), embedded)),
    ).toEqual({ status: 403, code: "admin_local_only" });
    const rebound = new Request("http://localhost:3000/api/x", {
      method: "POST",
      headers: {
        host: "evil.example:3000",
        origin: "http://evil.example:3000",
        "content-type": "application/json",
        "x-forwarded-for": "127.0.0.1",
      },
      body: "{}",
    });
    expect(await errorOf(await requireAdmin(rebound, embedded))).toEqual({
      status: 403,
      code: "admin_local_only",
    });
    expect(await errorOf(await requireAdmin(mutation(), postgres))).toEqual({
      status: 403,
      code: "admin_disabled",
    });
    // A session cookie means nothing without a password.
    expect(
      await errorOf(await requireAdmin(mutation({ cookie: await validCookie() }), postgres)),
    ).toEqual({ status: 403, code: "admin_disabled" });
  });
});

describe("requireReader and adminStatus", () => {
  it("open reading needs nothing; admin reading needs a session", async () => {
    const get = () => new Request(`${ORIGIN}/api/x`, { headers: { host: "localhost:3000" } });
    expect(await requireReader(get(), ctx())).toBeNull();
    const closed = ctx({ dashboardRead: "admin" });
    const denied = await requireReader(get(), closed);
    expect(denied?.status).toBe(401);
    const withCookie = get();
    withCookie.headers.set("cookie", await validCookie());
    expect(await requireReader(withCookie, closed)).toBeNull();
  });

  it("says whether admin actions are available and why not", async () => {
    const get = new Request(`${ORIGIN}/api/auth/session`, { headers: { host: "localhost:3000" } });
    expect(await adminStatus(get, ctx())).toMatchObject({
      loggedIn: false,
      mode: "password",
      adminActions: false,
      canRead: true,
    });
    get.headers.set("cookie", await validCookie());
    const status = await adminStatus(get, ctx());
    expect(status).toMatchObject({ loggedIn: true, adminActions: true, reason: null });
    expect(Date.parse(status.expiresAt ?? "")).toBeGreaterThan(Date.now());
    expect(
      await adminStatus(get, ctx({ adminPassword: undefined, db: { ...db, kind: "pglite" } })),
    ).toMatchObject({ mode: "loopback", adminActions: true, loggedIn: false });
  });
});
