import http from "node:http";
import { expect, test } from "@playwright/test";
import { E2E_BASE_URL, E2E_PORT } from "./fixtures/app";

/**
 * Malformed requests against the real server, bytes on the wire as given (app/api/routes.fuzz
 * .test.ts calls the handlers in-process; this checks what Next.js itself does with a NUL or
 * bad UTF-8 in a path segment before the handler runs): a 4xx with the error shape, never a 5xx.
 */

interface Sent {
  status: number;
  body: string;
}

function send(
  path: string,
  { method = "GET", headers = {} }: { method?: string; headers?: Record<string, string> } = {},
): Promise<Sent> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: "127.0.0.1",
        port: E2E_PORT,
        path,
        method,
        headers: { host: `localhost:${E2E_PORT}`, origin: E2E_BASE_URL, ...headers },
      },
      (res) => {
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (c) => {
          body += c;
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on("error", reject);
    req.end(method === "GET" ? undefined : "{}");
  });
}

const errorOf = (body: string) =>
  (JSON.parse(body) as { error?: { code: string; message: string } }).error;
const cursorOf = (v: unknown) => Buffer.from(JSON.stringify(v)).toString("base64url");

test.describe("malformed input", () => {
  for (const [path, parameter] of [
    ["/api/sources/%00", "id"],
    ["/api/dead-letters/9999999999999999999", "id"],
    ["/api/repairs/9223372036854775808", "id"],
    ["/api/items?q=%00", "q"],
    ["/api/items?q=a&q=b", "q"],
    [`/api/items?cursor=${cursorOf(["2026", "x"])}`, "cursor"],
    ["/api/dead-letters?stage=%00", "stage"],
    ["/api/dead-letters?cursor=9999999999999999999", "cursor"],
    ["/api/audit?action=%00", "action"],
  ] as const) {
    test(`${path} is a 400 naming ${parameter}`, async () => {
      const res = await send(path);
      expect(res.status, res.body).toBe(400);
      expect(errorOf(res.body)?.code).toBe("bad_request");
      expect(errorOf(res.body)?.message).toMatch(new RegExp(`^${parameter}: `));
    });
  }

  test("a path that does not percent-decode is a 400, not Next.js's bare 500", async () => {
    for (const path of [
      "/api/sources/%ED%A0%80",
      "/api/sources/%E0%A4%A",
      "/api/items/%ED%A0%80",
      "/sources/%ED%A0%80",
    ]) {
      const res = await send(path);
      expect(res.status, `${path}: ${res.body}`).toBe(400);
      expect(errorOf(res.body)?.message).toMatch(/^path: /);
    }
  });

  test("a session cookie that does not decode reads as logged out", async () => {
    const res = await send("/api/auth/session", {
      headers: { cookie: "wirewatch_admin=%E0%A4%A" },
    });
    expect(res.status, res.body).toBe(200);
    expect(JSON.parse(res.body)).toMatchObject({ loggedIn: false });
  });

  test("the webhook refuses ?source= with a NUL as a 400, not a 503", async () => {
    const res = await send("/api/webhooks/stories?source=%00", {
      method: "POST",
      headers: { "content-type": "application/json" },
    });
    expect(res.status, res.body).toBe(400);
    expect(JSON.parse(res.body)).toMatchObject({ outcome: "rejected", reason: "unknown_source" });
  });
});
