import { unstable_doesMiddlewareMatch } from "next/experimental/testing/server";
import { NextRequest } from "next/server";
import { describe, expect, it } from "vitest";
import { config, proxy } from "./proxy";

type MatchConfig = Parameters<typeof unstable_doesMiddlewareMatch>[0]["config"];

// Next reads the matcher from the source as a literal, so it carries no `as const`.
const match = (url: string, headers: Record<string, string> = {}) =>
  unstable_doesMiddlewareMatch({ config: config as MatchConfig, url, headers });

describe("proxy", () => {
  it("runs for pages, their prefetches, and the APIs", () => {
    expect(match("/")).toBe(true);
    expect(match("/sources")).toBe(true);
    expect(match("/sources", { "next-router-prefetch": "1" })).toBe(true);
    expect(match("/sources", { purpose: "prefetch" })).toBe(true);
    expect(match("/sources?_rsc=abc", { rsc: "1", "next-router-prefetch": "1" })).toBe(true);
    expect(match("/api/sources")).toBe(true);
    expect(match("/api/auth/session")).toBe(true);
    expect(match("/api/auth/login", { "content-length": "0" })).toBe(true);
    // Built assets are files, answered the same to anyone.
    expect(match("/_next/static/chunks/main.js")).toBe(false);
  });

  it("stays out of the way of a request with a body, which the route reads itself", () => {
    // Next reads a body the proxy matches to its end before the route runs (and keeps up to
    // 10 MB of it twice); the routes' own reader stops at its cap (lib/api/body.ts).
    expect(match("/api/auth/login", { "transfer-encoding": "chunked" })).toBe(false);
    expect(match("/api/auth/login", { "content-length": "20000000" })).toBe(false);
  });

  it("refuses a host this server does not answer to, for pages and APIs alike", async () => {
    for (const path of ["/", "/sources", "/api/sources", "/api/audit"]) {
      const res = proxy(
        new NextRequest(`http://evil.example${path}`, { headers: { host: "evil.example" } }),
      );
      expect(res.status, path).toBe(421);
      expect(await res.json()).toMatchObject({ error: { code: "unknown_host" } });
    }
    const ok = proxy(
      new NextRequest("http://localhost:3000/api/sources", { headers: { host: "localhost:3000" } }),
    );
    expect(ok.status).toBe(200);
  });

  it("gives a prefetched page its Content-Security-Policy", () => {
    const res = proxy(
      new NextRequest("http://localhost:3000/sources", {
        headers: { host: "localhost:3000", "next-router-prefetch": "1", purpose: "prefetch" },
      }),
    );
    expect(res.headers.get("content-security-policy")).toMatch(/script-src 'self' 'nonce-/);
  });
});
