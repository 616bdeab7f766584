import { promises as dns, type LookupAddress } from "node:dns";
import http from "node:http";
import https from "node:https";
import { isIP, type LookupFunction } from "node:net";
import zlib from "node:zlib";
import { classifyError, FetchError } from "./classify";
import { blockedAddressReason, blockedHostnameReason, ipLiteral } from "./ssrf";

/** Our product token, as robots.txt groups name it. */
export const ROBOTS_AGENT = "wirewatch";
export const USER_AGENT = `${ROBOTS_AGENT}/0.1 (news ingestion; +https://github.com/wirewatch/wirewatch)`;

/** Host name → every address it has. Injected in tests; the system resolver otherwise. */
export type Resolver = (hostname: string) => Promise<string[]>;

export const systemResolver: Resolver = async (hostname) =>
  (await dns.lookup(hostname, { all: true, verbatim: true })).map((a) => a.address);

export interface HttpLimits {
  /** DNS plus TCP connect. 5 s: a healthy host answers in well under 1 s even across oceans. */
  connectTimeoutMs: number;
  /** Request sent → status line and headers. 15 s leaves room for a slow feed generator. */
  headersTimeoutMs: number;
  /** The whole exchange, every redirect hop included: what cuts a 1 byte/s drip off. */
  totalTimeoutMs: number;
  /** Decompressed body bytes. 10 MiB: the largest real feeds we know of are 2–3 MiB. */
  maxBytes: number;
  /** 5 hops, as browsers and the OWASP cheat sheet suggest; real feeds need one or two. */
  maxRedirects: number;
}

export const DEFAULT_LIMITS: HttpLimits = {
  connectTimeoutMs: 5_000,
  headersTimeoutMs: 15_000,
  totalTimeoutMs: 30_000,
  maxBytes: 10 * 1024 * 1024,
  maxRedirects: 5,
};

export interface HttpGetOptions {
  /** The source may reach private addresses (a feed on the intranet, a test server). */
  allowPrivate: boolean;
  /**
   * Host names (not addresses) whose DNS answers may be private even when allowPrivate is off:
   * a narrower exception for one intranet name, and how tests reach their 127.0.0.1 server under
   * a name while every other hop is still checked. An IP-literal host is never excepted.
   */
  allowPrivateHosts?: readonly string[];
  resolver?: Resolver;
  /** Extra request headers (If-None-Match, If-Modified-Since, Accept). */
  headers?: Record<string, string>;
  limits?: Partial<HttpLimits>;
  /** Called before each hop is dialled, e.g. to take a token from the host's rate budget. */
  beforeHop?: (url: URL) => Promise<void>;
  /** Called with the checked address each hop is about to dial (logging, tests). */
  onDial?: (url: URL, address: string) => void;
}

export interface HttpResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  /** Decompressed; empty for anything but 2xx (the body of an error page is not kept). */
  body: Buffer;
  finalUrl: string;
  /** Set when every hop to finalUrl was permanent (301/308): the caller may store finalUrl. */
  permanentRedirect?: string;
  redirects: number;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/**
 * One guarded GET: http/https only, redirects followed by hand and every hop re-validated, the
 * address checked and then pinned (the socket dials exactly the address that passed the SSRF
 * check, so a DNS answer that changes between check and connect cannot move it), explicit
 * timeouts that destroy the socket, and a cap on decompressed bytes. No agent, so no keep-alive
 * pool and no proxy: HTTP(S)_PROXY variables are ignored by design (node:http never reads them,
 * and a proxy would dial addresses we did not check).
 */
export async function httpGet(url: string, options: HttpGetOptions): Promise<HttpResponse> {
  const limits = { ...DEFAULT_LIMITS, ...options.limits };
  let deadline = Date.now() + limits.totalTimeoutMs;
  let current = parseTarget(url);
  let permanent = true;
  for (let hop = 0; ; hop++) {
    // Time spent waiting for the host's rate budget is ours, not the server's: the total timeout
    // pauses, or a queue of polls for one busy host would time out before dialling.
    const waitStart = Date.now();
    await options.beforeHop?.(current);
    deadline += Date.now() - waitStart;
    const address = await resolveChecked(current, options, limits, deadline);
    options.onDial?.(current, address);
    const res = await requestOnce(current, address, options.headers ?? {}, limits, deadline);
    const location = res.headers.location;
    if (REDIRECTS.has(res.status)) {
      if (!location)
        throw new FetchError("redirect", `${current.host}: ${res.status} without Location`);
      if (hop >= limits.maxRedirects) {
        throw new FetchError("redirect", `more than ${limits.maxRedirects} redirects from ${url}`);
      }
      permanent &&= res.status === 301 || res.status === 308;
      current = parseTarget(location, current);
      continue;
    }
    const settled = (res.status >= 200 && res.status < 300) || res.status === 304;
    return {
      ...res,
      finalUrl: current.href,
      redirects: hop,
      permanentRedirect: hop > 0 && permanent && settled ? current.href : undefined,
    };
  }
}

function parseTarget(raw: string, base?: URL): URL {
  let url: URL;
  try {
    // The WHATWG parser canonicalises odd host spellings: 127.1, 0x7f.0.0.1, 2130706433 and
    // 017700000001 all become 127.0.0.1 before any check sees them.
    url = new URL(raw, base);
  } catch (err) {
    throw new FetchError("blocked_ssrf", `not a valid URL: ${raw.slice(0, 200)}`, { cause: err });
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new FetchError("blocked_ssrf", `scheme ${url.protocol} is not http or https`);
  }
  return url;
}

async function resolveChecked(
  url: URL,
  options: HttpGetOptions,
  limits: HttpLimits,
  deadline: number,
): Promise<string> {
  const excepted = options.allowPrivate || (options.allowPrivateHosts ?? []).includes(url.hostname);
  const guard = (address: string, mayBePrivate: boolean) => {
    if (!isIP(address)) throw new FetchError("dns", `${url.hostname} resolved to "${address}"`);
    const reason = mayBePrivate ? null : blockedAddressReason(address);
    if (reason) throw new FetchError("blocked_ssrf", `${url.host} refused: ${reason}`);
  };
  // An IP-literal host never reaches a lookup function, so it is checked here, not only there.
  const literal = ipLiteral(url);
  if (literal) {
    guard(literal, options.allowPrivate);
    return literal;
  }
  const nameReason = excepted ? null : blockedHostnameReason(url.hostname);
  if (nameReason) throw new FetchError("blocked_ssrf", `${url.host} refused: ${nameReason}`);
  const resolver = options.resolver ?? systemResolver;
  const wait = Math.max(0, Math.min(limits.connectTimeoutMs, deadline - Date.now()));
  let timer: NodeJS.Timeout | undefined;
  let addresses: string[];
  try {
    addresses = await Promise.race([
      resolver(url.hostname),
      new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new FetchError("dns", `resolving ${url.hostname} took over ${wait} ms`)),
          wait,
        );
      }),
    ]);
  } catch (err) {
    if (err instanceof FetchError) throw err;
    throw new FetchError("dns", `cannot resolve ${url.hostname}: ${(err as Error).message}`, {
      cause: err,
    });
  } finally {
    clearTimeout(timer);
  }
  if (addresses.length === 0) throw new FetchError("dns", `${url.hostname} has no addresses`);
  // Every address is checked, not only the one we dial: a name that answers both a public and a
  // private address is an attacker's name.
  for (const address of addresses) guard(address, excepted);
  return addresses[0] as string;
}

type Exchange = Pick<HttpResponse, "status" | "headers" | "body">;

function requestOnce(
  url: URL,
  address: string,
  headers: Record<string, string>,
  limits: HttpLimits,
  deadline: number,
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
    let decoder: zlib.Gunzip | zlib.Inflate | zlib.BrotliDecompress | undefined;
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
      else if (encoding === "deflate") decoder = zlib.createInflate();
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
