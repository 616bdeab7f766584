import http, { type IncomingMessage } from "node:http";
import https from "node:https";
import { isIP, type LookupFunction } from "node:net";
import { classifyError, FetchError } from "./classify";
import { USER_AGENT } from "./userAgent";

export interface StreamLimits {
  /** DNS + TCP connect, and then the status line: 5 s and 15 s as for feeds. */
  connectTimeoutMs: number;
  headersTimeoutMs: number;
}

/**
 * One server-sent-events request on an address already checked (the socket is pinned to it, as
 * exchange.ts pins a poll's). Resolves with the response whatever its status, for the fetcher
 * to classify; every failure rejects with a classified FetchError. No redirects (a stream that
 * moves is a configuration change, not something to follow silently) and no body cap: the body
 * is read incrementally, and the reader drops the connection when it goes idle.
 */
export function connectStream(
  url: URL,
  address: string,
  limits: StreamLimits,
  signal?: AbortSignal,
): Promise<IncomingMessage> {
  const family = isIP(address);
  const lookup = ((_host, opts, cb) => {
    if ((opts as { all?: boolean }).all) cb(null, [{ address, family }]);
    else cb(null, address, family);
  }) as LookupFunction;
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
      signal,
    });
    const connectTimer = setTimeout(
      () =>
        req.destroy(
          new FetchError(
            "timeout",
            `${url.host}: no connection within ${limits.connectTimeoutMs} ms`,
          ),
        ),
      limits.connectTimeoutMs,
    );
    req.on("socket", (socket) => socket.once("connect", () => clearTimeout(connectTimer)));
    const headersTimer = setTimeout(
      () =>
        req.destroy(
          new FetchError("timeout", `${url.host}: no headers within ${limits.headersTimeoutMs} ms`),
        ),
      limits.headersTimeoutMs,
    );
    req.on("response", (res) => {
      clearTimeout(connectTimer);
      clearTimeout(headersTimer);
      resolve(res);
    });
    req.on("error", (err) => {
      clearTimeout(connectTimer);
      clearTimeout(headersTimer);
      reject(
        err instanceof FetchError
          ? err
          : new FetchError(classifyError(err), `${url.host}: ${err.message}`, { cause: err }),
      );
    });
    req.end();
  });
}
