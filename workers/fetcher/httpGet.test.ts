import zlib from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FetchError } from "./classify";
import { httpGet, USER_AGENT } from "./httpGet";
import { fixedResolver, startServer, type TestServer } from "./testing/servers";

const MiB = 1024 * 1024;
let server: TestServer;
let dripClosedAt = 0;
const bomb = zlib.gzipSync(Buffer.alloc(64 * MiB));

beforeAll(async () => {
  server = await startServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://x");
    switch (url.pathname) {
      case "/feed":
        res.setHeader("etag", '"v1"');
        res.end(
          JSON.stringify({ ua: req.headers["user-agent"], inm: req.headers["if-none-match"] }),
        );
        return;
      case "/gzip":
        res.setHeader("content-encoding", "gzip");
        res.end(zlib.gzipSync("hello gzip"));
        return;
      case "/deflate":
        res.setHeader("content-encoding", "deflate");
        res.end(zlib.deflateSync("hello deflate"));
        return;
      case "/raw-deflate":
        res.setHeader("content-encoding", "deflate");
        res.end(zlib.deflateRawSync("hello raw deflate"));
        return;
      case "/deflate-bomb":
        res.setHeader("content-encoding", "deflate");
        res.end(zlib.deflateRawSync(Buffer.alloc(16 * MiB)));
        return;
      case "/corrupt":
        res.setHeader("content-encoding", "gzip");
        res.end(Buffer.from("this is not gzip at all"));
        return;
      case "/br":
        res.setHeader("content-encoding", "br");
        res.end(zlib.brotliCompressSync("hello br"));
        return;
      case "/big-declared":
        res.setHeader("content-length", String(50 * MiB));
        res.write(Buffer.alloc(1024));
        return; // never finishes: the client must refuse before reading
      case "/big-chunked": {
        const chunk = Buffer.alloc(MiB, 97);
        let sent = 0;
        const pump = () => {
          while (sent < 50) {
            sent++;
            if (!res.write(chunk)) return void res.once("drain", pump);
          }
          res.end();
        };
        res.on("error", () => {});
        pump();
        return;
      }
      case "/bomb":
        res.setHeader("content-encoding", "gzip");
        res.end(bomb);
        return;
      case "/drip": {
        res.writeHead(200, { "content-type": "text/plain" });
        const t = setInterval(() => res.write("x"), 1000);
        res.on("close", () => {
          clearInterval(t);
          dripClosedAt = Date.now();
        });
        res.write("x");
        return;
      }
      case "/hang":
        return; // never answers
      case "/redirect": {
        const to = url.searchParams.get("to") ?? "/feed";
        res.writeHead(Number(url.searchParams.get("status") ?? 302), { location: to });
        res.end();
        return;
      }
      case "/loop":
        res.writeHead(302, { location: "/loop" });
        res.end();
        return;
      default:
        res.writeHead(404);
        res.end();
    }
  });
});
afterAll(() => server.close());

const open = { allowPrivate: true };
const short = { connectTimeoutMs: 500, headersTimeoutMs: 500, totalTimeoutMs: 1_000 };

async function codeOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return "ok";
  } catch (err) {
    expect(err).toBeInstanceOf(FetchError);
    expect((err as Error).message).toMatch(/^fetcher: /);
    return (err as FetchError).code;
  }
}

describe("httpGet", () => {
  it("sends our User-Agent and the validators it is given", async () => {
    const res = await httpGet(`${server.origin}/feed`, {
      ...open,
      headers: { "if-none-match": '"v0"' },
    });
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body.toString())).toEqual({ ua: USER_AGENT, inm: '"v0"' });
    expect(USER_AGENT).toMatch(/^wirewatch\//);
  });

  it("decompresses gzip, deflate (zlib-wrapped or raw) and brotli", async () => {
    expect((await httpGet(`${server.origin}/gzip`, open)).body.toString()).toBe("hello gzip");
    expect((await httpGet(`${server.origin}/deflate`, open)).body.toString()).toBe("hello deflate");
    expect((await httpGet(`${server.origin}/raw-deflate`, open)).body.toString()).toBe(
      "hello raw deflate",
    );
    const bomb = httpGet(`${server.origin}/deflate-bomb`, { ...open, limits: { maxBytes: MiB } });
    expect(await codeOf(bomb)).toBe("too_large");
    expect(await codeOf(httpGet(`${server.origin}/corrupt`, open))).toBe("protocol");
    expect((await httpGet(`${server.origin}/br`, open)).body.toString()).toBe("hello br");
  });

  it("refuses a Content-Length over the cap before reading the body", async () => {
    expect(
      await codeOf(
        httpGet(`${server.origin}/big-declared`, { ...open, limits: { maxBytes: MiB } }),
      ),
    ).toBe("too_large");
  });

  it("cuts a 50 MB chunked body off at the cap", async () => {
    const before = process.memoryUsage().rss;
    const code = await codeOf(
      httpGet(`${server.origin}/big-chunked`, { ...open, limits: { maxBytes: 2 * MiB } }),
    );
    expect(code).toBe("too_large");
    expect(process.memoryUsage().rss - before).toBeLessThan(40 * MiB);
  });

  it("applies the cap to decompressed bytes: a gzip bomb is too_large", async () => {
    expect(bomb.length).toBeLessThan(MiB); // 64 MiB of zeros in a few tens of KiB
    const t0 = Date.now();
    expect(
      await codeOf(httpGet(`${server.origin}/bomb`, { ...open, limits: { maxBytes: 4 * MiB } })),
    ).toBe("too_large");
    expect(Date.now() - t0).toBeLessThan(2_000);
  });

  it("cuts a 1 byte/s drip off at the total timeout and closes the socket", async () => {
    const t0 = Date.now();
    expect(await codeOf(httpGet(`${server.origin}/drip`, { ...open, limits: short }))).toBe(
      "timeout",
    );
    const took = Date.now() - t0;
    expect(took).toBeGreaterThanOrEqual(900);
    expect(took).toBeLessThan(1_800);
    // The socket is gone too, not only the promise: the server sees the connection close.
    await new Promise((r) => setTimeout(r, 100));
    expect(dripClosedAt).toBeGreaterThanOrEqual(t0);
  });

  it("times out a server that never sends headers", async () => {
    expect(await codeOf(httpGet(`${server.origin}/hang`, { ...open, limits: short }))).toBe(
      "timeout",
    );
  });

  it("connect refused is `connect`", async () => {
    const gone = await startServer(() => {});
    const origin = gone.origin;
    await gone.close();
    expect(await codeOf(httpGet(`${origin}/`, open))).toBe("connect");
  });

  it("follows redirects by hand and reports a permanent one", async () => {
    const perm = await httpGet(`${server.origin}/redirect?status=301&to=/feed`, open);
    expect(perm.status).toBe(200);
    expect(perm.redirects).toBe(1);
    expect(perm.permanentRedirect).toBe(`${server.origin}/feed`);
    const temp = await httpGet(`${server.origin}/redirect?status=302&to=/feed`, open);
    expect(temp.finalUrl).toBe(`${server.origin}/feed`);
    expect(temp.permanentRedirect).toBeUndefined();
  });

  it("gives up after 5 redirects", async () => {
    expect(await codeOf(httpGet(`${server.origin}/loop`, open))).toBe("redirect");
    expect(await codeOf(httpGet(`${server.origin}/redirect?to=file:///etc/passwd`, open))).toBe(
      "blocked_ssrf",
    );
  });

  it("ignores proxy environment variables", async () => {
    const saved = { ...process.env };
    process.env.HTTP_PROXY = "http://10.255.255.1:3128";
    process.env.http_proxy = "http://10.255.255.1:3128";
    try {
      expect((await httpGet(`${server.origin}/feed`, open)).status).toBe(200);
    } finally {
      process.env = saved;
    }
  });
});

describe("the SSRF guard at connect time", () => {
  const hostile = [
    "127.0.0.1",
    "127.1",
    "0x7f.0.0.1",
    "2130706433",
    "017700000001",
    "10.0.0.1",
    "169.254.169.254",
    "[::1]",
    "[::ffff:7f00:1]",
    "[fc00::1]",
    "metadata.google.internal",
  ];

  it.each(hostile)("refuses %s directly, without a lookup or a connection", async (host) => {
    const resolver = fixedResolver("127.0.0.1");
    const before = server.connections();
    const code = await codeOf(
      httpGet(`http://${host}:${server.port}/feed`, { allowPrivate: false, resolver }),
    );
    expect(code).toBe("blocked_ssrf");
    expect(resolver.calls).toEqual([]);
    expect(server.connections()).toBe(before);
  });

  it.each(hostile)("refuses %s reached by a redirect", async (host) => {
    // feed.test is the one name allowed to resolve to our 127.0.0.1 server; the hop is not.
    const resolver = fixedResolver("127.0.0.1");
    const before = server.hits("/feed");
    const to = encodeURIComponent(`http://${host}:${server.port}/feed`);
    const code = await codeOf(
      httpGet(`http://feed.test:${server.port}/redirect?to=${to}`, {
        allowPrivate: false,
        allowPrivateHosts: ["feed.test"],
        resolver,
      }),
    );
    expect(code).toBe("blocked_ssrf");
    expect(server.hits("/feed")).toBe(before);
  });

  it("refuses a name whose DNS answer is private, and one with any private answer", async () => {
    const before = server.connections();
    const one = fixedResolver("10.0.0.1");
    expect(await codeOf(httpGet("http://evil.test/", { allowPrivate: false, resolver: one }))).toBe(
      "blocked_ssrf",
    );
    const mixed = async () => ["93.184.216.34", "127.0.0.1"];
    expect(
      await codeOf(httpGet("http://evil.test/", { allowPrivate: false, resolver: mixed })),
    ).toBe("blocked_ssrf");
    expect(server.connections()).toBe(before);
  });

  it("dials the checked address: a DNS answer that changes after the check cannot move the socket", async () => {
    // Rebinding: the first answer is public, every later one is our 127.0.0.1 server. The name is
    // resolved once per hop and the socket is pinned to that answer, so the server is never
    // reached; the public address is unroutable here and fails as a timeout or connect error.
    const answers: string[] = [];
    const resolver = async () => {
      const answer = answers.length === 0 ? "93.184.216.34" : "127.0.0.1";
      answers.push(answer);
      return [answer];
    };
    const dialled: string[] = [];
    const before = server.connections();
    const code = await codeOf(
      httpGet(`http://rebind.test:${server.port}/feed`, {
        allowPrivate: false,
        resolver,
        limits: { connectTimeoutMs: 300, totalTimeoutMs: 600 },
        onDial: (_url, address) => dialled.push(address),
      }),
    );
    expect(["timeout", "connect", "reset"]).toContain(code);
    expect(answers).toEqual(["93.184.216.34"]);
    expect(dialled).toEqual(["93.184.216.34"]);
    expect(server.connections()).toBe(before);
  });

  it("a second answer for the same name on a redirect is checked again", async () => {
    const answers = ["127.0.0.1", "10.0.0.7"];
    const resolver = async () => [answers.shift() ?? "127.0.0.1"];
    const code = await codeOf(
      httpGet(
        `http://feed.test:${server.port}/redirect?to=${encodeURIComponent(`http://other.test:${server.port}/feed`)}`,
        {
          allowPrivate: false,
          allowPrivateHosts: ["feed.test"],
          resolver,
        },
      ),
    );
    expect(code).toBe("blocked_ssrf");
  });
});
