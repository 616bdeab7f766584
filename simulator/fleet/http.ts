import type { IncomingMessage, ServerResponse } from "node:http";
import { setTimeout as sleep } from "node:timers/promises";
import { notModified } from "../conditional";
import { renderStory } from "../render/page";
import { esc } from "../render/xml";
import type { RequestLog } from "../requestLog";
import {
  feedValidators,
  fleetItem,
  fleetOutlet,
  itemSlots,
  poolStory,
  renderFleetFeed,
} from "./feeds";
import { unit } from "./hash";
import { type FleetPlan, hostIndex, hostOf, profile, TAG } from "./plan";

/** What the fleet answered, over its whole run. */
export interface FleetStats {
  requests: number;
  /** By status code, plus `held` (a timeout feed's unanswered requests) and `dropped`. */
  answers: Record<string, number>;
  /** Bytes of bodies sent. */
  bytes: number;
  /** Feeds asked for at least once. */
  feedsPolled: number;
}

export interface FleetContext {
  plan: FleetPlan;
  /** Simulated now: what items are visible and how long a recovering feed has been down. */
  now: () => number;
  /** Simulated time at the fleet's start. */
  startedAt: number;
  log: RequestLog;
  stopping: AbortSignal;
  /** Names the options in every ETag, so a fleet started otherwise never matches an old one. */
  fingerprint: string;
}

const ROBOTS = "User-agent: *\nAllow: /\n";
// Windows in which a flapping feed fails or not; 10 minutes is two polls at the default interval.
const FLAP_WINDOW_MS = 10 * 60_000;

export function createFleetHandler(ctx: FleetContext) {
  const { plan } = ctx;
  // The only per-feed state: how often each was asked for (4 bytes a feed).
  const polls = new Uint32Array(plan.size);
  const stats: FleetStats = { requests: 0, answers: {}, bytes: 0, feedsPolled: 0 };
  const count = (answer: string, bytes = 0) => {
    stats.answers[answer] = (stats.answers[answer] ?? 0) + 1;
    stats.bytes += bytes;
  };
  const send = (
    req: IncomingMessage,
    res: ServerResponse,
    status: number,
    type: string,
    body: string,
  ) => {
    const length = Buffer.byteLength(body);
    res.writeHead(status, { "content-type": type, "content-length": length });
    res.end(req.method === "HEAD" ? undefined : body);
    count(String(status), req.method === "HEAD" ? 0 : length);
  };
  const notFound = (req: IncomingMessage, res: ServerResponse, why: string) =>
    send(req, res, 404, "text/plain; charset=utf-8", `${why}\n`);

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    stats.requests += 1;
    ctx.log.add({
      at: Date.now(),
      method: req.method ?? "GET",
      host: req.headers.host ?? "",
      path: req.url ?? "/",
      userAgent: req.headers["user-agent"] ?? "",
    });
    // Routed by the address the client dialled, which is also right when bound to 0.0.0.0.
    const host = hostIndex(req.socket.localAddress ?? "");
    if (host === null || host >= plan.hosts) return notFound(req, res, "not a fleet host");
    if (req.method !== "GET" && req.method !== "HEAD") {
      return send(req, res, 405, "text/plain; charset=utf-8", `${req.method} is not served here\n`);
    }
    const path = (req.url ?? "/").split("?")[0] as string;
    if (path === "/robots.txt") return send(req, res, 200, "text/plain; charset=utf-8", ROBOTS);
    const m = /^\/(f|a)\/(\d{1,7})\/(feed\.xml|\d{1,12}|p\d{1,12}-(?:en|bn)-\d{1,7})$/.exec(path);
    const index = m ? Number(m[2]) : -1;
    if (!m || index >= plan.size || hostOf(plan, index) !== host) {
      return notFound(req, res, `nothing at ${path} on this host`);
    }
    if (m[1] === "a") return article(req, res, index, m[3] as string);
    if (m[3] !== "feed.xml") return notFound(req, res, `nothing at ${path}`);
    if ((polls[index] as number) === 0) stats.feedsPolled += 1;
    polls[index] = (polls[index] as number) + 1;
    return feed(req, res, index);
  }

  async function feed(req: IncomingMessage, res: ServerResponse, index: number): Promise<void> {
    const f = profile(plan, index);
    const { seed } = plan;
    if (f.behaviour === "slow") {
      // A different delay each second, the same for every request within it.
      const [min, max] = plan.slowMs;
      const ms =
        min + Math.floor(unit(seed, index, Math.floor(Date.now() / 1000), TAG.slow) * (max - min));
      const slept = await sleep(ms, true, { signal: ctx.stopping }).catch(() => false);
      if (!slept || res.destroyed) return;
    }
    const now = ctx.now();
    if (f.failure === "timeout") {
      count("held");
      // Held, not answered: the client's own timeout decides; then the socket is dropped.
      await sleep(plan.timeoutHoldMs, true, { signal: ctx.stopping }).catch(() => false);
      count("dropped");
      return void req.socket.destroy();
    }
    if (f.failure === "down") {
      res.setHeader("retry-after", "600");
      return send(req, res, 503, "text/plain; charset=utf-8", "Service Unavailable\n");
    }
    if (
      f.failure === "flapping" &&
      unit(seed, index, Math.floor(now / FLAP_WINDOW_MS), TAG.flap) < 0.5
    ) {
      return send(req, res, 500, "text/html; charset=utf-8", "<h1>Internal Server Error</h1>\n");
    }
    if (f.failure === "recovering") {
      const downForMs = (5 + Math.floor(unit(seed, index, 0, TAG.recover) * 25)) * 60_000;
      if (now < ctx.startedAt + downForMs) {
        return send(req, res, 503, "text/plain; charset=utf-8", "Service Unavailable\n");
      }
    }
    res.setHeader("cache-control", "no-cache");
    if (f.validators) {
      const v = feedValidators(plan, f, now, ctx.fingerprint);
      res.setHeader("etag", v.etag);
      res.setHeader("last-modified", v.lastModified);
      if (notModified(req, v)) {
        res.writeHead(304);
        res.end();
        return count("304");
      }
    }
    const { body, contentType } = renderFleetFeed(plan, f, now);
    send(req, res, 200, contentType, body);
  }

  function article(req: IncomingMessage, res: ServerResponse, index: number, name: string): void {
    const f = profile(plan, index);
    const outlet = fleetOutlet(plan, f);
    const pooled = /^p(\d+)-(en|bn)-(\d+)$/.exec(name);
    if (pooled) {
      const [window, language, j] = [
        Number(pooled[1]),
        pooled[2] as "en" | "bn",
        Number(pooled[3]),
      ];
      if (j >= plan.poolSize[language]) return void notFound(req, res, "no such story");
      const story = poolStory(plan, language, window, j);
      const html = `<!doctype html>\n<html lang="${language}"><head><meta charset="utf-8"><title>${esc(outlet.name)}</title></head>\n<body>\n<h1>${esc(story.title)}</h1>\n<p>${esc(story.summary)}</p>\n</body>\n</html>\n`;
      return void send(req, res, 200, "text/html; charset=utf-8", html);
    }
    const slot = Number(name);
    const found = itemSlots(plan, f, ctx.now(), plan.itemsPerFeed).find((s) => s.slot === slot);
    if (!found) return void notFound(req, res, "no such story");
    send(req, res, 200, "text/html; charset=utf-8", renderStory(outlet, fleetItem(plan, f, found)));
  }

  return {
    handle,
    stats: (): FleetStats => structuredClone(stats),
    polls: (index: number): number => polls[index] ?? 0,
  };
}
