import http, { type IncomingMessage } from "node:http";
import https from "node:https";
import type { LookupFunction } from "node:net";
import { FetchError } from "@/workers/fetcher/classify";
import { type Resolver, resolveChecked } from "@/workers/fetcher/resolveChecked";
import { USER_AGENT } from "@/workers/fetcher/userAgent";

export interface OpenStreamOptions {
  allowPrivate: boolean;
  resolver?: Resolver;
  /** DNS + TCP connect, and then the status line: 5 s and 15 s as for feeds. */
  connectTimeoutMs?: number;
  headersTimeoutMs?: number;
  signal?: AbortSignal;
}

/**
 * Opens a server-sent-events stream behind the same SSRF guard as every fetch: the host's
 * addresses are checked and the socket is pinned to the checked one. No redirects (a stream that
 * moves is a configuration change, not something to follow silently) and no body cap: the body
 * is read incrementally, and the caller drops the connection when it goes idle.
 */
export async function openEventStream(
  rawUrl: string,
  options: OpenStreamOptions,
): Promise<IncomingMessage> {
  const url = new URL(rawUrl);
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new FetchError("blocked_ssrf", `scheme ${url.protocol} is not http or https`);
  }
  const connectTimeout = options.connectTimeoutMs ?? 5_000;
  const address = await resolveChecked(url, options, connectTimeout);
  const family = address.includes(":") ? 6 : 4;
  const lookup: LookupFunction = (_host, opts, cb) => {
    if ((opts as { all?: boolean }).all) cb(null, [{ address, family }]);
    else cb(null, address, family);
  };
  const client = url.protocol === "https:" ? https : http;
  return new Promise((resolve, reject) => {
    const req = client.request(url, {
      method: "GET",
      lookup,
      agent: false,
      headers: {
        accept: "text/event-stream",
        "cache-control": "no-cache",
        "user-agent": USER_AGENT,
      },
      signal: options.signal,
    });
    const connectTimer = setTimeout(
      () =>
        req.destroy(
          new FetchError("timeout", `connecting to ${url.host} took over ${connectTimeout} ms`),
        ),
      connectTimeout,
    );
    req.on("socket", (socket) => socket.once("connect", () => clearTimeout(connectTimer)));
    const headersTimer = setTimeout(
      () => req.destroy(new FetchError("timeout", `${url.host} sent no response headers in time`)),
      options.headersTimeoutMs ?? 15_000,
    );
    req.on("response", (res) => {
      clearTimeout(connectTimer);
      clearTimeout(headersTimer);
      const type = String(res.headers["content-type"] ?? "");
      if (res.statusCode !== 200 || !type.startsWith("text/event-stream")) {
        res.destroy();
        reject(
          new FetchError(
            res.statusCode === 429
              ? "http_429"
              : (res.statusCode ?? 0) >= 500
                ? "http_5xx"
                : "http_4xx",
            `stream ${url.host}${url.pathname} answered ${res.statusCode} ${type}`,
            { status: res.statusCode },
          ),
        );
        return;
      }
      resolve(res);
    });
    req.on("error", (err) => {
      clearTimeout(connectTimer);
      clearTimeout(headersTimer);
      reject(
        err instanceof FetchError
          ? err
          : new FetchError(codeOf(err), `stream: ${err.message}`, { cause: err }),
      );
    });
    req.end();
  });
}

function codeOf(err: NodeJS.ErrnoException): FetchError["code"] {
  if (err.code === "ECONNRESET" || err.code === "EPIPE") return "reset";
  if (err.code === "ECONNREFUSED" || err.code === "EHOSTUNREACH" || err.code === "ENETUNREACH")
    return "connect";
  if (err.code === "ENOTFOUND" || err.code === "EAI_AGAIN") return "dns";
  if (err.name === "AbortError") return "reset";
  return "reset";
}
