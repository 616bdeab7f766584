import http from "node:http";
import { expect, test } from "@playwright/test";
import { E2E_ADMIN_PASSWORD, E2E_BASE_URL, E2E_PORT } from "./fixtures/app";

/**
 * What a request can and cannot do at the edge of the app (docs/decisions/013): where a login
 * may send the browser, how large a body may be, who a login failure is counted against, which
 * Host names are answered, and that every page, prefetched or not, comes with its CSP.
 */

interface Sent {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** A raw HTTP request (Host, source address and chunked bodies as given). */
function send(
  path: string,
  {
    method = "GET",
    headers = {},
    localAddress,
    write,
  }: {
    method?: string;
    headers?: Record<string, string>;
    localAddress?: string;
    write?: (req: http.ClientRequest) => Promise<void>;
  } = {},
): Promise<Sent> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: "127.0.0.1", port: E2E_PORT, path, method, headers, localAddress },
      (res) => {
        let body = "";
        res.setEncoding("utf8");
        res.on("data", (c) => {
          body += c;
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      },
    );
    req.on("error", reject);
    if (write) write(req).catch(reject);
    else req.end();
  });
}

const sameOrigin = {
  host: `localhost:${E2E_PORT}`,
  origin: E2E_BASE_URL,
  "content-type": "application/json",
};

async function residentBytes(): Promise<number> {
  const text = (await send("/api/metrics", { headers: { host: `localhost:${E2E_PORT}` } })).body;
  return Number(/^process_resident_memory_bytes (\S+)$/m.exec(text)?.[1]);
}

test.describe("login", () => {
  const offSite = [
    "/%09/evil.example",
    "/%0A/evil.example",
    "/%0D/evil.example",
    "/%09%5Cevil.example",
    "//evil.example",
    "/\\evil.example",
    "https://evil.example",
    "/%5Cevil.example",
  ];
  for (const next of offSite) {
    test(`after login with next=${next} the browser stays on this site`, async ({ page }) => {
      // Written into the address as it stands: these are the spellings a link would carry.
      await page.goto(`/login?next=${next}`);
      await page.getByLabel("Password").fill(E2E_ADMIN_PASSWORD);
      await page.getByRole("button", { name: "Log in" }).click();
      // These run first, while the server's line (dedup, embed, extract, the read model's first
      // builds) works through the simulator's opening backlog on 2 cores: a login then took more
      // than the default 5 s once in CI. Where it lands is the check, not how fast.
      await expect(page).toHaveURL(`${E2E_BASE_URL}/`, { timeout: 20_000 });
      expect(new URL(page.url()).origin).toBe(E2E_BASE_URL);
    });
  }

  test("a next on this site is followed", async ({ page }) => {
    await page.goto("/login?next=/sources%3Fx%3D1");
    await page.getByLabel("Password").fill(E2E_ADMIN_PASSWORD);
    await page.getByRole("button", { name: "Log in" }).click();
    await expect(page).toHaveURL(`${E2E_BASE_URL}/sources?x=1`);
  });

  test("a 20 MB chunked login body gets 413, and the server does not keep it", async () => {
    const before = await residentBytes();
    const chunk = Buffer.alloc(64 * 1024, "a");
    const res = await send("/api/auth/login", {
      method: "POST",
      headers: { ...sameOrigin, "transfer-encoding": "chunked" },
      write: async (req) => {
        req.write('{"password":"');
        for (let sent = 0; sent < 20 * 1024 * 1024 && !req.destroyed; sent += chunk.length) {
          if (!req.write(chunk)) await new Promise((r) => req.once("drain", r));
          if (req.writableEnded) break;
        }
        req.end('"}');
      },
    }).catch((err: NodeJS.ErrnoException) => {
      // The server may answer and close before the whole body is sent.
      if (err.code === "EPIPE" || err.code === "ECONNRESET") return null;
      throw err;
    });
    if (res) {
      expect(res.status).toBe(413);
      expect(JSON.parse(res.body)).toMatchObject({ error: { code: "too_large" } });
    }
    const after = await residentBytes();
    expect(after - before).toBeLessThan(20 * 1024 * 1024);
  });

  test("100 failures from rotated X-Forwarded-For do not lock out the admin elsewhere", async ({
    page,
  }) => {
    const statuses: number[] = [];
    for (let i = 0; i < 100; i++) {
      const res = await send("/api/auth/login", {
        method: "POST",
        localAddress: "127.0.0.2",
        headers: { ...sameOrigin, "x-forwarded-for": `198.18.0.${i}` },
        write: async (req) => {
          req.end(JSON.stringify({ password: `guess ${i}` }));
        },
      });
      statuses.push(res.status);
    }
    expect(statuses.slice(0, 10)).toEqual(Array(10).fill(401));
    expect(new Set(statuses.slice(10))).toEqual(new Set([429]));
    // The admin's browser, from 127.0.0.1, logs in at once.
    await page.goto("/login");
    await page.getByLabel("Password").fill(E2E_ADMIN_PASSWORD);
    await page.getByRole("button", { name: "Log in" }).click();
    await expect(page).toHaveURL(`${E2E_BASE_URL}/`);
  });
});

test.describe("hosts", () => {
  for (const path of ["/api/sources", "/api/audit", "/api/metrics", "/", "/sources"]) {
    test(`Host: evil.example is refused at ${path}`, async () => {
      const res = await send(path, { headers: { host: "evil.example" } });
      expect(res.status).toBe(421);
      expect(JSON.parse(res.body)).toMatchObject({ error: { code: "unknown_host" } });
      expect(res.body).not.toContain("http");
    });
  }

  test("Host: evil.example is refused for a mutation with a body too", async () => {
    const res = await send("/api/auth/login", {
      method: "POST",
      headers: { ...sameOrigin, host: "evil.example", origin: "http://evil.example" },
      write: async (req) => {
        req.end(JSON.stringify({ password: "whatever" }));
      },
    });
    expect(res.status).toBe(421);
  });

  test("loopback names are answered", async () => {
    for (const host of [`localhost:${E2E_PORT}`, `127.0.0.1:${E2E_PORT}`, `[::1]:${E2E_PORT}`]) {
      expect((await send("/api/sources", { headers: { host } })).status, host).toBe(200);
    }
  });
});

test("a prefetched page carries its Content-Security-Policy", async () => {
  const prefetches: Record<string, string>[] = [
    { "next-router-prefetch": "1" },
    { purpose: "prefetch" },
    { purpose: "prefetch", "next-router-prefetch": "1" },
  ];
  for (const headers of prefetches) {
    const res = await send("/sources", { headers: { host: `localhost:${E2E_PORT}`, ...headers } });
    expect(res.status, JSON.stringify(headers)).toBe(200);
    expect(res.headers["content-security-policy"], JSON.stringify(headers)).toMatch(
      /script-src 'self' 'nonce-[^']+' 'strict-dynamic'/,
    );
  }
});
