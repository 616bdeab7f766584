import type { LookupAddress } from "node:dns";
import http from "node:http";
import https from "node:https";
import { isIP, type LookupFunction } from "node:net";
import { Transform } from "node:stream";
import zlib from "node:zlib";
import { classifyError, FetchError } from "./classify";
import type { HttpLimits, HttpResponse } from "./httpGet";
import { USER_AGENT } from "./userAgent";

export type Exchange = Pick<HttpResponse, "status" | "headers" | "body">;

/**
 * One request and its response on an address already checked: the socket is pinned to it,
 * every timeout destroys the socket, and the body is capped in decompressed bytes. Anything but
 * a 2xx comes back without its body.
 */
export function exchange(
  url: URL,
  address: string,
  headers: Record<string, string>,
  limits: HttpLimits,
  deadline: number,
  ca?: string | Buffer,
): Promise<Exchange> {
  return new Promise((resolve, reject) => {
    const family = isIP(address);
    // The pin: whatever name the socket asks for, it gets the address that passed the check.
    const lookup = ((_host, opts, cb) => {
      if ((opts as { all?: boolean }).all) {
        (cb as (e: null, a: LookupAddress[]) => void)(null, [{ address, family }]);
      } else cb(null, address, family);
    }) as LookupFunction;
    const mod = url.protocol === "https:" ? https : http;
    const req = mod.request({
      protocol: url.protocol,
      hostname: url.hostname.replace(/^\[(.*)\]$/, "$1"),
      port: url.port || undefined,
      path: `${url.pathname}${url.search}`,
      method: "GET",
      agent: false,
      lookup,
      ...(ca ? { ca } : {}),
      headers: {
        host: url.host,
        "user-agent": USER_AGENT,
        "accept-encoding": "gzip, deflate, br",
        ...headers,
      },
    });
    const timers: NodeJS.Timeout[] = [];
    let done = false;
    let res: http.IncomingMessage | undefined;
    let decoder: Transform | undefined;
    const finish = () => {
      done = true;
      for (const t of timers) clearTimeout(t);
      // Destroy the socket, not only the promise: a drip feed must not keep a socket open.
      decoder?.destroy();
      res?.destroy();
      req.destroy();
    };
    const fail = (err: FetchError) => {
      if (done) return;
      finish();
      reject(err);
    };
    const succeed = (value: Exchange) => {
      if (done) return;
      finish();
      resolve(value);
    };
    const after = (ms: number, what: string) => {
      const t = setTimeout(() => fail(new FetchError("timeout", `${url.host}: ${what}`)), ms);
      timers.push(t);
      return t;
    };
    const totalMs = Math.max(0, deadline - Date.now());
    after(totalMs, `no complete response within ${totalMs} ms`);
    const connectTimer = after(
      limits.connectTimeoutMs,
      `no connection within ${limits.connectTimeoutMs} ms`,
    );
    const headersTimer = after(
      limits.headersTimeoutMs,
      `no headers within ${limits.headersTimeoutMs} ms`,
    );
    req.on("socket", (socket) => {
      if (!socket.connecting) clearTimeout(connectTimer);
      else socket.once("connect", () => clearTimeout(connectTimer));
    });
    req.on("error", (err) => {
      fail(new FetchError(classifyError(err), `${url.host}: ${err.message}`, { cause: err }));
    });
    req.on("response", (response) => {
      res = response;
      clearTimeout(headersTimer);
      const status = response.statusCode ?? 0;
      if (status < 200 || status >= 300) {
        succeed({ status, headers: response.headers, body: Buffer.alloc(0) });
        return;
      }
      const declared = Number(response.headers["content-length"]);
      if (Number.isFinite(declared) && declared > limits.maxBytes) {
        fail(
          new FetchError(
            "too_large",
            `${url.host}: Content-Length ${declared} > ${limits.maxBytes}`,
          ),
        );
        return;
      }
      const encoding = String(response.headers["content-encoding"] ?? "identity")
        .toLowerCase()
        .trim();
      if (encoding === "gzip" || encoding === "x-gzip") decoder = zlib.createGunzip();
      else if (encoding === "deflate") decoder = createDeflateDecoder();
      else if (encoding === "br") decoder = zlib.createBrotliDecompress();
      else if (encoding !== "identity" && encoding !== "") {
        fail(new FetchError("protocol", `${url.host}: unsupported Content-Encoding ${encoding}`));
        return;
      }
      const chunks: Buffer[] = [];
      let wire = 0;
      let size = 0;
      response.on("data", (chunk: Buffer) => {
        wire += chunk.length;
        if (wire > limits.maxBytes) {
          fail(new FetchError("too_large", `${url.host}: body over ${limits.maxBytes} bytes`));
        }
      });
      response.on("error", (err) =>
        fail(new FetchError("reset", `${url.host}: ${err.message}`, { cause: err })),
      );
      response.on("aborted", () => fail(new FetchError("reset", `${url.host}: response aborted`)));
      const body = decoder ? response.pipe(decoder) : response;
      if (decoder)
        body.on("error", (err) =>
          fail(
            new FetchError("protocol", `${url.host}: corrupt ${encoding} body: ${err.message}`, {
              cause: err,
            }),
          ),
        );
      // The cap counts decompressed bytes: a 10 MB gzip bomb inflates to gigabytes.
      body.on("data", (chunk: Buffer) => {
        size += chunk.length;
        if (size > limits.maxBytes) {
          fail(
            new FetchError(
              "too_large",
              `${url.host}: decompressed body over ${limits.maxBytes} bytes`,
            ),
          );
          return;
        }
        chunks.push(chunk);
      });
      body.on("end", () =>
        succeed({ status, headers: response.headers, body: Buffer.concat(chunks) }),
      );
    });
    req.end();
  });
}

/**
 * "deflate" as RFC 9110 defines it is zlib-wrapped (RFC 1950), but some servers send raw RFC 1951
 * data under that name, as browsers tolerate. The first bytes decide: a zlib header has 8 in
 * the low nibble of its first byte and makes a 16-bit number divisible by 31.
 */
function createDeflateDecoder(): Transform {
  let inner: zlib.Inflate | zlib.InflateRaw | undefined;
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      if (!inner) {
        const b0 = chunk[0] ?? 0;
        const wrapped =
          chunk.length >= 2 && (b0 & 0x0f) === 8 && ((b0 << 8) | (chunk[1] ?? 0)) % 31 === 0;
        inner = wrapped ? zlib.createInflate() : zlib.createInflateRaw();
        inner.on("data", (out: Buffer) => this.push(out));
        inner.on("error", (err) => this.destroy(err));
      }
      inner.write(chunk, () => done());
    },
    flush(done) {
      if (!inner) return done();
      inner.once("end", () => done());
      inner.end();
    },
    destroy(err, done) {
      inner?.destroy();
      done(err);
    },
  });
}
