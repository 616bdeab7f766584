import type { LookupAddress } from "node:dns";
import http from "node:http";
import https from "node:https";
import { isIP, type LookupFunction } from "node:net";
import { FetchError } from "@/workers/fetcher/classify";
import { type AddressPolicy, resolveChecked } from "@/workers/fetcher/resolveChecked";
import { USER_AGENT } from "@/workers/fetcher/userAgent";

export interface HubRequest {
  mode: "subscribe" | "unsubscribe";
  topic: string;
  callback: string;
  leaseSeconds?: number;
  secret?: string;
}

export interface HubAnswer {
  status: number;
  /** The first 500 characters of a refusal's body, for the subscription's last_error. */
  detail: string;
}

/**
 * 10 s for the whole exchange: a hub answers a subscription request at once (202) and verifies
 * the intent later on its own request, so a slow hub is a broken one; the maintainer retries.
 */
const HUB_TIMEOUT_MS = 10_000;

/**
 * POSTs a (un)subscription request to the hub (WebSub §5.1, form-encoded). The hub's address is
 * checked like any fetch (SSRF: the resolved address, private ones only when the source may reach
 * them) and the socket is pinned to the address that passed, as the fetcher's exchange does.
 * Resolves with the hub's status (202 is the recommendation's "accepted"); throws a FetchError
 * when the hub cannot be reached.
 */
export async function sendHubRequest(
  hub: string,
  request: HubRequest,
  policy: AddressPolicy,
): Promise<HubAnswer> {
  const url = new URL(hub);
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new FetchError("blocked_ssrf", `hub ${hub}: only http and https hubs are dialled`);
  }
  const address = await resolveChecked(url, policy, HUB_TIMEOUT_MS);
  const form = new URLSearchParams({
    "hub.mode": request.mode,
    "hub.topic": request.topic,
    "hub.callback": request.callback,
  });
  if (request.leaseSeconds) form.set("hub.lease_seconds", String(request.leaseSeconds));
  if (request.secret) form.set("hub.secret", request.secret);
  const body = Buffer.from(form.toString());
  const family = isIP(address);
  const lookup = ((_host, opts, cb) => {
    if ((opts as { all?: boolean }).all) {
      (cb as (e: null, a: LookupAddress[]) => void)(null, [{ address, family }]);
    } else cb(null, address, family);
  }) as LookupFunction;
  const mod = url.protocol === "https:" ? https : http;
  return new Promise<HubAnswer>((resolve, reject) => {
    const req = mod.request({
      protocol: url.protocol,
      hostname: url.hostname.replace(/^\[(.*)\]$/, "$1"),
      port: url.port || undefined,
      path: `${url.pathname}${url.search}`,
      method: "POST",
      agent: false,
      lookup,
      timeout: HUB_TIMEOUT_MS,
      headers: {
        host: url.host,
        "user-agent": USER_AGENT,
        "content-type": "application/x-www-form-urlencoded",
        "content-length": String(body.length),
      },
    });
    const timer = setTimeout(() => {
      req.destroy(
        new FetchError("timeout", `hub ${url.host}: no answer within ${HUB_TIMEOUT_MS} ms`),
      );
    }, HUB_TIMEOUT_MS);
    req.on("error", (err) => {
      clearTimeout(timer);
      reject(
        err instanceof FetchError
          ? err
          : new FetchError("connect", `hub ${url.host}: ${err.message}`),
      );
    });
    req.on("response", (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on("data", (chunk: Buffer) => {
        // Only the start of a refusal is kept; a hub that streams more is cut off.
        if (size < 4096) chunks.push(chunk);
        size += chunk.length;
      });
      res.on("end", () => {
        clearTimeout(timer);
        resolve({
          status: res.statusCode ?? 0,
          detail: Buffer.concat(chunks).toString("utf8").slice(0, 500),
        });
      });
      res.on("error", (err) => {
        clearTimeout(timer);
        reject(new FetchError("connect", `hub ${url.host}: ${err.message}`));
      });
    });
    req.end(body);
  });
}
