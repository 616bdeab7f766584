// The public read path answered before Next routes it (directPath.ts): the same answers as the
// route handlers, byte for byte and header for header, on the server Next listens on only.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { gunzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seedReadModel } from "../testing/readModelSeed";
import { acceptsGzip, installPublicReadDirectPath } from "./directPath";
import { ReadModel } from "./serve";
import { MemoryStore } from "./store";
import type { PublicStory } from "./types";

// Read once by lib/config.ts: 100 a minute per client here.
process.env.WIREWATCH_PUBLIC_RATE_LIMIT = "100";

const globals = globalThis as unknown as { wirewatchReadModel?: ReadModel };
let stories: PublicStory[];
let next: http.Server;
let other: http.Server;
let nextOrigin: string;
let otherOrigin: string;
const previousPort = process.env.PORT;

function listen(server: http.Server): Promise<string> {
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () =>
      resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`),
    ),
  );
}

beforeAll(async () => {
  const store = new MemoryStore(null);
  stories = await seedReadModel(store, { count: 60, builtAt: new Date(Date.now() - 5_000) });
  globals.wirewatchReadModel = new ReadModel(async () => store);
  // Stand-ins for Next's server (its port in process.env.PORT, as `next start` sets it) and for
  // another server of the process (the built-in simulator's).
  next = http.createServer((_req, res) => res.end("next"));
  other = http.createServer((_req, res) => res.end("other"));
  nextOrigin = await listen(next);
  otherOrigin = await listen(other);
  process.env.PORT = String((next.address() as AddressInfo).port);
  installPublicReadDirectPath();
});
afterAll(async () => {
  process.env.PORT = previousPort;
  await new Promise((r) => next?.close(r));
  await new Promise((r) => other?.close(r));
  await globals.wirewatchReadModel?.close();
  globals.wirewatchReadModel = undefined;
});

let clientNo = 0;
async function get(path: string, headers: Record<string, string> = {}, origin = nextOrigin) {
  clientNo += 1;
  return fetch(`${origin}${path}`, {
    // fetch asks for gzip by itself and inflates it out of sight: identity unless a test asks.
    headers: {
      "accept-encoding": "identity",
      "x-forwarded-for": `203.0.113.${clientNo % 250}`,
      ...headers,
    },
  });
}

async function viaRoute(path: string, headers: Record<string, string> = {}): Promise<Response> {
  const request = new Request(`http://localhost${path}`, {
    headers: { host: "localhost", "x-forwarded-for": "198.51.100.7", ...headers },
  });
  if (path.startsWith("/api/news/")) {
    const { GET } = await import("@/app/api/news/[id]/route");
    const id = decodeURIComponent(path.slice("/api/news/".length).split("?")[0] ?? "");
    return GET(request, { params: Promise.resolve({ id }) });
  }
  const { GET } = await import("@/app/api/news/route");
  return GET(request);
}

describe("the direct path answers as the route handlers do", () => {
  const paths = () => [
    "/api/news",
    "/api/news?limit=5&lang=bn",
    "/api/news?category=politics",
    "/api/news?limit=abc",
    "/api/news?limit=5&limit=6",
    "/api/news?cursor=bogus",
    "/api/news?nope=1",
    `/api/news/${stories[3]?.id}`,
    `/api/news/${"e".repeat(64)}`,
    "/api/news/not-an-id",
  ];

  it("the same status, body and caching headers for every kind of request", async () => {
    for (const path of paths()) {
      const direct = await get(path, { "accept-encoding": "identity" });
      const route = await viaRoute(path);
      expect({ path, status: direct.status }).toEqual({ path, status: route.status });
      expect(await direct.text()).toBe(await route.text());
      // (X-Cache differs by design: the first of the two builds a page the second finds.)
      for (const name of ["cache-control", "etag", "content-type", "x-model-version"]) {
        expect({ path, name, value: direct.headers.get(name) }).toEqual({
          path,
          name,
          value: route.headers.get(name),
        });
      }
    }
  });

  it("carries the security headers and the API's CSP that next.config.ts gives every answer", async () => {
    const res = await get("/api/news");
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    expect(res.headers.get("x-frame-options")).toBe("DENY");
    expect(res.headers.get("content-security-policy")).toContain("default-src 'none'");
    expect(res.headers.get("vary")).toBe("Accept-Encoding");
    expect(res.headers.get("x-model-age")).toMatch(/^\d+$/);
  });

  it("304 for If-None-Match; HEAD has the headers and no body", async () => {
    const first = await get("/api/news");
    const etag = first.headers.get("etag") ?? "";
    const again = await get("/api/news", { "if-none-match": `W/${etag}` });
    expect(again.status).toBe(304);
    expect(await again.text()).toBe("");
    const head = await fetch(`${nextOrigin}/api/news`, {
      method: "HEAD",
      headers: { "accept-encoding": "identity" },
    });
    expect(head.status).toBe(200);
    expect(head.headers.get("etag")).toBe(etag);
    expect(Number(head.headers.get("content-length"))).toBe((await first.arrayBuffer()).byteLength);
  });

  it("gzip when asked: the same bytes compressed, once per payload, under a weak ETag", async () => {
    const plain = await get("/api/news");
    const plainBody = Buffer.from(await plain.arrayBuffer());
    const raw = await new Promise<{ headers: http.IncomingHttpHeaders; body: Buffer }>(
      (resolve, reject) => {
        http
          .get(`${nextOrigin}/api/news`, { headers: { "accept-encoding": "gzip, br" } }, (res) => {
            const chunks: Buffer[] = [];
            res.on("data", (c: Buffer) => chunks.push(c));
            res.on("end", () => resolve({ headers: res.headers, body: Buffer.concat(chunks) }));
          })
          .on("error", reject);
      },
    );
    expect(raw.headers["content-encoding"]).toBe("gzip");
    expect(raw.headers.etag).toBe(`W/${plain.headers.get("etag")}`);
    expect(gunzipSync(raw.body).equals(plainBody)).toBe(true);
    const back = await get("/api/news", {
      "accept-encoding": "gzip",
      "if-none-match": raw.headers.etag ?? "",
    });
    expect(back.status).toBe(304);
  });

  it("refuses a foreign Host (421) and a path that does not decode (400), as proxy.ts does", async () => {
    const foreign = await new Promise<number>((resolve, reject) => {
      http
        .get(`${nextOrigin}/api/news`, { headers: { host: "evil.example" } }, (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        })
        .on("error", reject);
    });
    expect(foreign).toBe(421);
    const undecodable = await get("/api/news/%E0%A4%A");
    expect(undecodable.status).toBe(400);
    expect(await undecodable.json()).toMatchObject({ error: { code: "bad_request" } });
  });

  it("limits a client by its socket's address: a forged X-Forwarded-For does not reset it", async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 130; i++) {
      const res = await fetch(`${nextOrigin}/api/news/${stories[0]?.id}`, {
        headers: { "x-forwarded-for": `192.0.2.${i % 250}` },
      });
      await res.arrayBuffer();
      statuses.push(res.status);
    }
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThan(0);
  });

  it("leaves everything else to Next: other paths, methods, a trailing slash, other servers", async () => {
    expect(await (await get("/api/news/")).text()).toBe("next");
    expect(await (await get("/api/newsroom")).text()).toBe("next");
    expect(await (await get("/api/news/a/b")).text()).toBe("next");
    expect(await (await fetch(`${nextOrigin}/api/news`, { method: "POST" })).text()).toBe("next");
    expect(await (await get("/api/news", {}, otherOrigin)).text()).toBe("other");
  });
});

describe("acceptsGzip", () => {
  it.each([
    [undefined, false],
    ["", false],
    ["gzip", true],
    ["deflate, gzip;q=0.5", true],
    ["gzip;q=0", false],
    ["br", false],
    ["*", true],
    ["*;q=0", false],
    ["gzip;q=0, *", false],
    ["identity", false],
  ])("%s → %s", (header, expected) => {
    expect(acceptsGzip(header)).toBe(expected);
  });
});
