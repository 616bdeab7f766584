import * as crypto from "node:crypto";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { requireAdmin } from "@/lib/auth/guard";
import { stampPeer } from "@/lib/auth/peer";
import { SESSION_COOKIE } from "@/lib/auth/session";
import type { Database } from "@/lib/db";
import { createTestDatabase, type TestDatabase } from "@/lib/testing/db";
import { POST as loginRoute } from "./login/route";
import { POST as logoutRoute } from "./logout/route";
import { GET as sessionRoute } from "./session/route";

// The real route handlers, on the configuration and database the app would use (getDb()).
vi.mock("node:crypto", async (importOriginal) => {
  const actual = await importOriginal<typeof import("node:crypto")>();
  return { ...actual, timingSafeEqual: vi.fn(actual.timingSafeEqual) };
});

const PASSWORD = "correct horse battery";
const ORIGIN = "http://localhost:3000";
let db: TestDatabase;

beforeAll(async () => {
  vi.stubEnv("ADMIN_PASSWORD", PASSWORD);
  vi.stubEnv("DASHBOARD_READ", "open");
  db = await createTestDatabase();
  (globalThis as unknown as { wirewatchDb?: Promise<Database> }).wirewatchDb = Promise.resolve(db);
});
afterAll(async () => {
  vi.unstubAllEnvs();
  await db?.drop();
});

let clients = 0;
/** A fresh client address per test, so the rate limit of one does not touch another. */
const newClient = () => `10.0.0.${++clients}`;

function post(
  path: string,
  body: unknown,
  { client = "10.9.9.9", headers = {} as Record<string, string> } = {},
): Request {
  return new Request(`${ORIGIN}${path}`, {
    method: "POST",
    headers: {
      host: "localhost:3000",
      origin: ORIGIN,
      "content-type": "application/json",
      "x-forwarded-for": client,
      ...headers,
    },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
}

function cookieOf(res: Response): string {
  const set = res.headers.get("set-cookie") ?? "";
  return set.split(";")[0] ?? "";
}

async function sessionVersion(): Promise<number> {
  return (await db.prisma.adminState.findUniqueOrThrow({ where: { id: 1 } })).sessionVersion;
}

async function status(cookie?: string) {
  const res = await sessionRoute(
    new Request(`${ORIGIN}/api/auth/session`, {
      headers: { host: "localhost:3000", ...(cookie ? { cookie } : {}) },
    }),
  );
  expect(res.headers.get("cache-control")).toContain("no-store");
  return (await res.json()) as { loggedIn: boolean; adminActions: boolean; mode: string };
}

async function loginOk(client = newClient()): Promise<string> {
  const res = await loginRoute(post("/api/auth/login", { password: PASSWORD }, { client }));
  expect(res.status).toBe(200);
  return cookieOf(res);
}

describe("POST /api/auth/login", () => {
  it("sets a sealed httpOnly SameSite=strict cookie with a 12 h lifetime", async () => {
    const res = await loginRoute(post("/api/auth/login", { password: PASSWORD }));
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ loggedIn: true, adminActions: true });
    const set = res.headers.get("set-cookie") ?? "";
    expect(set).toMatch(new RegExp(`^${SESSION_COOKIE}=Fe26\\.2`));
    expect(set).toContain("HttpOnly");
    expect(set).toContain("SameSite=Strict");
    expect(set).toContain("Path=/");
    expect(set).toContain("Max-Age=43200");
    expect(set).not.toContain("Secure");
    expect(set).not.toContain(PASSWORD);
    const https = await loginRoute(
      post(
        "/api/auth/login",
        { password: PASSWORD },
        { headers: { "x-forwarded-proto": "https" } },
      ),
    );
    expect(https.headers.get("set-cookie")).toContain("Secure");
    expect(await status(cookieOf(res))).toMatchObject({ loggedIn: true, mode: "password" });
  });

  it("compares the password in constant time, on equal-length hashes", async () => {
    const spy = vi.mocked(crypto.timingSafeEqual);
    spy.mockClear();
    const res = await loginRoute(
      post("/api/auth/login", { password: "x" }, { client: newClient() }),
    );
    expect(res.status).toBe(401);
    expect(spy).toHaveBeenCalledTimes(1);
    const [a, b] = spy.mock.calls[0] as [Buffer, Buffer];
    expect(a.length).toBe(32);
    expect(b.length).toBe(32);
  });

  it("refuses the 11th wrong password within the window with 429 and Retry-After", async () => {
    const client = newClient();
    for (let i = 1; i <= 10; i++) {
      const res = await loginRoute(post("/api/auth/login", { password: `guess ${i}` }, { client }));
      expect(res.status, `attempt ${i}`).toBe(401);
    }
    const eleventh = await loginRoute(
      post("/api/auth/login", { password: "guess 11" }, { client }),
    );
    expect(eleventh.status).toBe(429);
    const retryAfter = Number(eleventh.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(15 * 60);
    expect(await eleventh.json()).toMatchObject({ error: { code: "too_many_attempts" } });
    // While locked out even the right password waits; another client is not affected.
    const right = await loginRoute(post("/api/auth/login", { password: PASSWORD }, { client }));
    expect(right.status).toBe(429);
    expect(right.headers.get("set-cookie")).toBeNull();
    await loginOk();
  });

  it("refuses a cross-origin or non-JSON login and sets no cookie", async () => {
    const client = newClient();
    const cases: Request[] = [
      post(
        "/api/auth/login",
        { password: PASSWORD },
        { client, headers: { origin: "https://evil.example" } },
      ),
      post("/api/auth/login", `password=${PASSWORD}`, {
        client,
        headers: { "content-type": "application/x-www-form-urlencoded" },
      }),
    ];
    const noOrigin = post("/api/auth/login", { password: PASSWORD }, { client });
    noOrigin.headers.delete("origin");
    cases.push(noOrigin);
    const statuses = [];
    for (const request of cases) {
      const res = await loginRoute(request);
      statuses.push(res.status);
      expect(res.headers.get("set-cookie")).toBeNull();
    }
    expect(statuses).toEqual([403, 415, 403]);
    const huge = post("/api/auth/login", { password: "x".repeat(10_000) }, { client });
    huge.headers.set("content-length", "10020");
    expect((await loginRoute(huge)).status).toBe(413);
  });

  it("refuses a 20 MB chunked body with 413, reading no more than its cap", async () => {
    const chunk = new Uint8Array(64 * 1024).fill(0x61);
    let sent = 0;
    let peak = 0;
    const before = memory();
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('{"password":"'));
      },
      pull(controller) {
        peak = Math.max(peak, memory() - before);
        if (sent >= 20 * 1024 * 1024) return controller.close();
        sent += chunk.byteLength;
        controller.enqueue(chunk);
      },
    });
    const request = new Request(`${ORIGIN}/api/auth/login`, {
      method: "POST",
      headers: {
        host: "localhost:3000",
        origin: ORIGIN,
        "content-type": "application/json",
        "x-forwarded-for": newClient(),
      },
      body,
      duplex: "half",
    } as RequestInit);
    const res = await loginRoute(request);
    peak = Math.max(peak, memory() - before);
    expect(res.status).toBe(413);
    expect(await res.json()).toMatchObject({ error: { code: "too_large" } });
    expect(sent).toBeLessThan(1024 * 1024);
    expect(peak).toBeLessThan(20 * 1024 * 1024);
  });

  it("keys the limit on the peer: rotated X-Forwarded-For neither escapes it nor locks out others", async () => {
    const fromPeer = (peer: string, password: string, forwardedFor?: string) => {
      const request = post("/api/auth/login", { password }, { client: forwardedFor ?? "" });
      if (!forwardedFor) request.headers.delete("x-forwarded-for");
      stampPeer(request.headers, peer);
      return request;
    };
    const statuses: number[] = [];
    for (let i = 0; i < 100; i++) {
      const rotated = `198.18.${i >> 8}.${i & 255}`;
      statuses.push((await loginRoute(fromPeer("203.0.113.7", `guess ${i}`, rotated))).status);
    }
    expect(statuses.slice(0, 10)).toEqual(Array(10).fill(401));
    expect(statuses.slice(10)).toEqual(Array(90).fill(429));
    // The admin, from another address, logs in at once; the guesser stays locked out.
    expect((await loginRoute(fromPeer("192.0.2.10", PASSWORD))).status).toBe(200);
    expect((await loginRoute(fromPeer("203.0.113.7", PASSWORD, "192.0.2.10"))).status).toBe(429);
  });
});

/** Heap plus Buffers: what buffering a body would cost. */
function memory(): number {
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
}

describe("POST /api/auth/logout", () => {
  it("ends every session: an old cookie stops working", async () => {
    const first = await loginOk();
    const second = await loginOk();
    const admin = (cookie: string) =>
      requireAdmin(post("/api/anything", {}, { headers: { cookie } }));
    expect(await admin(first)).toEqual({ actor: "admin" });

    const res = await logoutRoute(post("/api/auth/logout", {}, { headers: { cookie: first } }));
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ loggedOut: true, revoked: true });
    expect(res.headers.get("set-cookie")).toMatch(new RegExp(`^${SESSION_COOKIE}=;.*Max-Age=0`));

    for (const cookie of [first, second]) {
      expect(await status(cookie)).toMatchObject({ loggedIn: false, adminActions: false });
      const refused = await admin(cookie);
      expect(refused).toBeInstanceOf(Response);
      expect((refused as Response).status).toBe(401);
    }
    expect(await admin(await loginOk())).toEqual({ actor: "admin" });
  });

  it("a logout that is refused (cross-origin, not JSON, no session) changes nothing", async () => {
    const cookie = await loginOk();
    const version = await sessionVersion();
    const crossSite = post(
      "/api/auth/logout",
      {},
      { headers: { cookie, origin: "https://evil.example" } },
    );
    expect((await logoutRoute(crossSite)).status).toBe(403);
    const form = post("/api/auth/logout", "", {
      headers: { cookie, "content-type": "text/plain" },
    });
    expect((await logoutRoute(form)).status).toBe(415);
    const anonymous = await logoutRoute(post("/api/auth/logout", {}));
    expect(await anonymous.json()).toEqual({ loggedOut: true, revoked: false });
    expect(await sessionVersion()).toBe(version);
    expect(await status(cookie)).toMatchObject({ loggedIn: true });
  });
});
