import { createHash } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { CHAT_PATH, type ChatEndpoint, type ChatOptions, createChatEndpoint } from "./chat";
import { storyFinder } from "./chatAnswer";
import { notModified } from "./conditional";
import { createControl, handleControl, type SimControl, sendJson } from "./control";
import {
  createEmbeddingsEndpoint,
  EMBEDDINGS_PATH,
  type EmbeddingsEndpoint,
  type EmbeddingsOptions,
} from "./embeddings";
import { FaultTable } from "./faults";
import { type Fleet, type FleetOptions, startFleet } from "./fleet";
import { Newsroom, SimError } from "./newsroom";
import { DEFAULT_OUTLETS, type Outlet } from "./outlets";
import { Random } from "./random";
import { FEED_CONTENT_TYPE, malform, renderFeed } from "./render/feeds";
import { renderPage, renderScriptedPage, renderStory } from "./render/page";
import { rfc822 } from "./render/xml";
import { RequestLog } from "./requestLog";
import { Scheduler } from "./scheduler";
import { type SimSource, type SourceRoute, sourceRoutes } from "./sources";
import type { StoryDesk } from "./stories/desk";
import { STORY_API_PATH, STORY_SOURCE_ID, serveStories } from "./stories/http";
import { createStoryService, type StoryOptions } from "./stories/service";
import { StreamHub } from "./stream";
import { truth } from "./truth";
import { HUB_CHECK_MS, HUB_PATH, WebSubHub } from "./websub";

export type { ChatOptions, ChatStats } from "./chat";
export type { SimControl } from "./control";
export type { Fault, FaultInput, FaultKind, FaultListing } from "./faults";
export type { Behaviour, Failure, FeedProfile, Fleet, FleetOptions, FleetStats } from "./fleet";
export type { HostRate } from "./hostRates";
export type { EditInput, PageHeadline, PublishInput, SimStory, StreamEvent } from "./newsroom";
export type { Outlet } from "./outlets";
export type { RepublishKind } from "./republish";
export type { LoggedRequest } from "./requestLog";
export type { SimSource } from "./sources";
export type { DeskEvent, DeskSnapshot, Story as DeskStory } from "./stories/desk";
export type { StoriesControl, StoryOptions } from "./stories/service";
export type { DeliveryStats, WebhookEndpoint, WebhookFaults } from "./stories/webhooks";
export type { PairScores, Truth, TruthItem } from "./truth";
export type { HubFault, HubStats, HubSubscription } from "./websub";

export interface SimulatorOptions {
  /** 0 (the default) picks a free port. */
  port?: number;
  /** Only loopback by default: the simulator is a test double, not a public service. */
  host?: string;
  /** Same seed, same clock, same calls → the same stories, guids and events. */
  seed?: number;
  /** The wall clock simulated time starts from and, unless `manual`, follows. */
  clock?: () => number;
  /** Time moves only through control.advance(ms): for tests that must not wait. */
  manual?: boolean;
  /** Original stories per minute across all outlets (default 8; copies and listings add ~85%). */
  ratePerMinute?: number;
  /** Mean time between breaking bursts (default 15 min); 0 turns them off. */
  burstEveryMs?: number;
  /** Keepalive comment interval on streams (default 5 s). */
  keepaliveMs?: number;
  /** How far the page leads the stream when it wins the race (default 28 ms, seed 000). */
  pageLeadMs?: number;
  /** Share of stream stories the page shows first (default 0.25). */
  pageLeadShare?: number;
  /** News made up before start, so feeds and history are not empty (default 20 min). */
  backlogMs?: number;
  outlets?: readonly Outlet[];
  /**
   * Outlets publish under host names of their own (`https://www.<outlet>.example/o/…`) instead of
   * the simulator's address, as real ones do: re-visits can then be on `amp.`, `m.` and bare hosts
   * too. Such links do not resolve; by default (false) every link is served here.
   */
  outletHosts?: boolean;
  /** The story API (source `story-desk`): organic rate, tickers, retention, webhook retries. */
  stories?: StoryOptions;
  /** The OpenAI-compatible embeddings endpoint (/v1/embeddings): dimensions, seed, API key. */
  embeddings?: EmbeddingsOptions;
  /** The OpenAI-compatible chat endpoint (/v1/chat/completions, model sim-extract-1): API key. */
  chat?: ChatOptions;
  /**
   * A WebSub hub at <url>/hub (simulator/websub.ts): every feed names it in a Link header, and it
   * pushes a feed to its subscribers when the outlet publishes. Off by default.
   */
  websubHub?: boolean;
  /**
   * Many feeds on many loopback hosts (simulator/fleet): `{ sources: 10_000 }` serves 10,000
   * feeds on 100 addresses 127.1.0.1… with the behaviour mix of the README's "Fleet" section.
   */
  fleet?: FleetOptions;
}

export interface Simulator {
  url: string;
  port: number;
  /** The sources to configure in wirewatch, listed in a stable order. */
  sources(): SimSource[];
  control: SimControl;
  /** POST <url>/v1/embeddings: its dimensions and request counts (faults: source `embeddings`). */
  embeddings: Pick<EmbeddingsEndpoint, "dims" | "stats">;
  /** POST <url>/v1/chat/completions: its model and request counts (faults: source `llm`). */
  chat: Pick<ChatEndpoint, "model" | "stats">;
  /** The WebSub hub, when started with `websubHub: true`. */
  websub: WebSubHub | null;
  /** The feed fleet, when started with `fleet`: its sources, behaviour and counters. */
  fleet: Fleet | null;
  stop(): Promise<void>;
}

// The real-time pump sleeps until the next scheduled event but at most this long, so a clock
// that jumps (an injected one, a laptop waking) is caught up within a second.
const MAX_PUMP_SLEEP_MS = 1_000;

const ROBOTS = "User-agent: *\nDisallow: /_control/\n";

export async function startSimulator(options: SimulatorOptions = {}): Promise<Simulator> {
  const clock = options.clock ?? Date.now;
  const keepaliveMs = options.keepaliveMs ?? 5_000;
  const outlets = options.outlets ?? DEFAULT_OUTLETS;
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, options.host ?? "127.0.0.1", () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const url = `http://${options.host ?? "127.0.0.1"}:${port}`;

  const start = clock();
  const scheduler = new Scheduler(start - (options.backlogMs ?? 20 * 60_000));
  const faults = new FaultTable();
  const routes = sourceRoutes(outlets, url);
  const requestLog = new RequestLog();
  const newsroom = new Newsroom({
    random: new Random(options.seed ?? 1),
    scheduler,
    outlets,
    baseUrl: url,
    ...(options.outletHosts ? { linkBase: (id: string) => `https://www.${id}.example` } : {}),
    ratePerMinute: options.ratePerMinute ?? 8,
    burstEveryMs: options.burstEveryMs ?? 15 * 60_000,
    pageLeadMs: options.pageLeadMs ?? 28,
    pageLeadShare: options.pageLeadShare ?? 0.25,
    isQuiet: (outletId) => faults.has(outletId, "quiet"),
  });
  // Created before the backlog runs, so in real time the story lists are not empty at start.
  const stories = createStoryService({
    seed: options.seed ?? 1,
    baseUrl: url,
    scheduler,
    manual: options.manual === true,
    settle: () => settle(),
    ...(options.stories ? { options: options.stories } : {}),
  });
  scheduler.runUntil(start);

  // Started after the newsroom's clock, so both run on the same simulated time (advance moves both).
  const fleet = options.fleet
    ? await startFleet(options.fleet, {
        seed: options.seed ?? 1,
        now: () => scheduler.now,
        log: requestLog,
      }).catch(async (err: unknown) => {
        await stories.stop();
        await new Promise<void>((resolve) => server.close(() => resolve()));
        throw err;
      })
    : null;

  const hub = new StreamHub(faults, () => scheduler.now);
  newsroom.onEvent((event) => hub.broadcast(event));
  const beat = () => {
    hub.keepalive();
    scheduler.after(keepaliveMs, beat);
  };
  scheduler.after(keepaliveMs, beat);

  const websub = options.websubHub
    ? new WebSubHub({
        url: `${url}${HUB_PATH}`,
        now: () => scheduler.now,
        topic: (topic) => {
          const route = [...routes.values()].find(
            (r) => r.source.kind === "feed" && r.source.url === topic,
          );
          return route
            ? {
                lastChanged: () => newsroom.lastChanged(route.outlet.id),
                render: () => feedBody({ newsroom, faults, url }, route),
              }
            : null;
        },
      })
    : null;
  if (websub) {
    const look = () => {
      websub.check();
      scheduler.after(HUB_CHECK_MS, look);
    };
    scheduler.after(HUB_CHECK_MS, look);
  }

  // Real time: simulated now = wall clock + whatever advance() added.
  let offset = 0;
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const pump = () => {
    clearTimeout(timer);
    if (stopped) return;
    scheduler.runUntil(clock() + offset);
    const wait = (scheduler.nextAt() ?? Number.POSITIVE_INFINITY) - (clock() + offset);
    timer = setTimeout(pump, Math.max(1, Math.min(wait, MAX_PUMP_SLEEP_MS)));
    // Inline in the Next.js server the simulator must not keep the process alive on its own.
    timer.unref();
  };
  if (!options.manual) pump();
  // After a control call: run what is due now and, in real time, wake for what it scheduled.
  const settle = () => (options.manual ? scheduler.runUntil(scheduler.now) : pump());

  const control = createControl({
    newsroom,
    faults,
    routes,
    advance: (ms) => {
      if (options.manual) scheduler.runUntil(scheduler.now + ms);
      else {
        offset += ms;
        pump();
      }
    },
    now: () => scheduler.now,
    connections: () => hub.counts(),
    settle,
    stories: stories.control,
    storySource: stories.source,
    truth: () => truth(newsroom, outlets, scheduler.now),
    requests: (options) => requestLog.list(options),
    hostRates: () => requestLog.hostRates(),
    fleet: () =>
      fleet
        ? {
            size: fleet.size,
            hosts: fleet.hosts,
            port: fleet.port,
            ...fleet.stats(),
            // The simulator's own cost, so a bench can tell it apart from the collector's.
            process: {
              cpuMs: Math.round((process.cpuUsage().user + process.cpuUsage().system) / 1000),
              rssMb: Math.round(process.memoryUsage().rss / 1e5) / 10,
              heapUsedMb: Math.round(process.memoryUsage().heapUsed / 1e5) / 10,
            },
          }
        : null,
  });

  const findStory = storyFinder(newsroom, outlets);
  // Aborted by stop(), so a latency fault's pending sleep does not outlive the server.
  const stopping = new AbortController();
  const app = {
    newsroom,
    faults,
    routes,
    hub,
    control,
    url,
    port,
    now: () => scheduler.now,
    stopping: stopping.signal,
    desk: stories.desk,
    storySource: stories.source,
    embeddings: createEmbeddingsEndpoint(options.embeddings),
    chat: createChatEndpoint((title) => findStory(title, scheduler.now), options.chat),
    websub,
  };
  server.on("request", (req, res) => {
    if (!req.url?.startsWith("/_control/")) {
      requestLog.add({
        at: Date.now(),
        method: req.method ?? "GET",
        host: req.headers.host ?? "",
        path: req.url ?? "/",
        userAgent: req.headers["user-agent"] ?? "",
      });
    }
    handle(app, req, res).catch((err: unknown) => {
      if (res.headersSent) return void res.destroy();
      const status = err instanceof SimError ? err.status : 500;
      const code = status === 404 ? "not_found" : status === 500 ? "internal" : "bad_request";
      sendJson(res, status, { error: { code, message: (err as Error).message } });
    });
  });

  return {
    url,
    port,
    sources: () => listedSources(app).map((s) => structuredClone(s)),
    control,
    embeddings: app.embeddings,
    chat: app.chat,
    websub,
    fleet,
    stop: async () => {
      stopped = true;
      await fleet?.stop();
      websub?.stop();
      stopping.abort();
      clearTimeout(timer);
      hub.closeAll();
      await stories.stop();
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      // Blackholed and latency-held requests never finish by themselves.
      server.closeAllConnections();
      await closed;
    },
  };
}

interface App {
  newsroom: Newsroom;
  port: number;
  faults: FaultTable;
  routes: Map<string, SourceRoute>;
  hub: StreamHub;
  control: SimControl;
  url: string;
  now: () => number;
  stopping: AbortSignal;
  desk: StoryDesk;
  storySource: SimSource;
  embeddings: EmbeddingsEndpoint;
  chat: ChatEndpoint;
  websub: WebSubHub | null;
}

/** The outlets' listed sources in a stable order, then the story API. */
function listedSources(app: App): SimSource[] {
  const outlets = [...app.routes.values()].filter((r) => r.listed).map((r) => r.source);
  return [...outlets, app.storySource];
}

async function handle(app: App, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url ?? "/", app.url);
  const parts = url.pathname.split("/").filter(Boolean);
  if (parts[0] === "_control") return handleControl(app.control, req, res, url);
  if (url.pathname === EMBEDDINGS_PATH) {
    return app.embeddings.handle(req, res, app.faults, app.stopping);
  }
  if (url.pathname === CHAT_PATH) return app.chat.handle(req, res, app.faults, app.stopping);
  if (url.pathname === HUB_PATH && app.websub) return app.websub.handle(req, res);
  if (req.method !== "GET" && req.method !== "HEAD") {
    throw new SimError(`${req.method} is not served here`, 405);
  }
  if (url.pathname === "/robots.txt") {
    // Collectors honour robots.txt; everything but the control API may be fetched.
    return sendText(req, res, 200, "text/plain; charset=utf-8", ROBOTS);
  }
  if (parts.length === 0 || url.pathname === "/sources") {
    return sendJson(res, 200, { sources: listedSources(app) });
  }
  if (parts[0] === STORY_API_PATH) {
    if (!(await networkFaults(app, STORY_SOURCE_ID, req, res))) return;
    return serveStories(app, parts.slice(1).map(decodeURIComponent), res, url, sendJson);
  }
  if (parts[0] === "o" && parts.length === 3) {
    const outlet = app.newsroom.outlet(parts[1] as string);
    const story = app.newsroom.stories(outlet.id)[Number(parts[2]) - 1];
    if (!story) throw new SimError("no such story", 404);
    return sendText(req, res, 200, "text/html; charset=utf-8", renderStory(outlet, story));
  }
  // /history is the default stream's backfill, for clients that only know the server's address.
  const streamRoute = [...app.routes.values()].find((r) => r.source.kind === "stream");
  if (url.pathname === "/history" && streamRoute) {
    return serveSource(app, streamRoute, "history", req, res, url);
  }
  const route = parts[0] === "s" ? app.routes.get(parts[1] ?? "") : undefined;
  if (!route) throw new SimError(`nothing at ${url.pathname}`, 404);
  return serveSource(app, route, parts.slice(2).join("/"), req, res, url);
}

async function serveSource(
  app: App,
  route: SourceRoute,
  rest: string,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
): Promise<void> {
  const id = route.source.id;
  if (!(await networkFaults(app, id, req, res))) return;

  const kind = route.source.kind;
  if (kind === "feed" && rest === "feed.xml") return serveFeed(app, route, req, res);
  if (kind === "page" && route.source.render === "browser") {
    const items = app.newsroom.pageItems(route.outlet.id);
    res.setHeader("cache-control", "no-cache");
    if (rest === "headlines.json") {
      const body = JSON.stringify(
        items.map((s) => ({ title: s.title, link: s.link, language: s.language })),
      );
      return sendText(req, res, 200, "application/json; charset=utf-8", body);
    }
    if (rest === "" || rest === "index.html") {
      const hostile = app.faults.has(id, "hostile-script") ? { port: app.port } : null;
      return sendText(
        req,
        res,
        200,
        "text/html; charset=utf-8",
        renderScriptedPage(route.outlet, hostile),
      );
    }
  }
  if (kind === "page" && (rest === "" || rest === "index.html")) {
    const html = renderPage(route.outlet, app.newsroom.pageItems(route.outlet.id));
    res.setHeader("cache-control", "no-cache");
    return sendText(req, res, 200, "text/html; charset=utf-8", html);
  }
  if (kind === "stream" && rest === "events") {
    const lastId = Number(
      req.headers["last-event-id"] ?? url.searchParams.get("lastEventId") ?? "",
    );
    const missed =
      Number.isInteger(lastId) && lastId > 0
        ? app.newsroom.history(id, { seq: lastId }).events
        : [];
    return app.hub.attach(id, res, missed);
  }
  if (kind === "stream" && rest === "history") return serveHistory(app, route, res, url);
  throw new SimError(`nothing at ${url.pathname}`, 404);
}

/**
 * The source's network faults, in the order a client would meet them on the wire; false when
 * one of them has answered (or swallowed) the request.
 */
async function networkFaults(
  app: App,
  id: string,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<boolean> {
  const { faults } = app;
  if (faults.has(id, "blackhole")) return false; // the socket stays open until the client gives up
  const latency = faults.get(id, "latency");
  if (latency) {
    const slept = await sleep(latency.ms, true, { signal: app.stopping }).catch(() => false);
    if (!slept || res.destroyed) return false;
  }
  if (faults.has(id, "reset")) {
    req.socket.resetAndDestroy();
    return false;
  }
  const tooMany = faults.get(id, "429");
  if (tooMany) {
    res.setHeader("retry-after", String(tooMany.retryAfter));
    sendText(req, res, 429, "text/plain; charset=utf-8", "Too Many Requests\n");
    return false;
  }
  if (faults.has(id, "503")) {
    sendText(req, res, 503, "text/plain; charset=utf-8", "Service Unavailable\n");
    return false;
  }
  return true;
}

/** The feed as served now (a poll and a WebSub push carry the same document). */
function feedBody(
  app: Pick<App, "newsroom" | "faults" | "url">,
  route: SourceRoute,
): { body: string; contentType: string } {
  const format = route.format ?? "rss2";
  const body = renderFeed(format, {
    outlet: route.outlet,
    selfUrl: route.source.url,
    homeUrl: `${app.url}/s/${route.outlet.id}-page/`,
    items: app.newsroom.feedItems(route.outlet.id),
    updated: app.newsroom.lastChanged(route.outlet.id),
  });
  return {
    body: app.faults.has(route.source.id, "malformed") ? malform(body) : body,
    contentType: FEED_CONTENT_TYPE[format],
  };
}

function serveFeed(app: App, route: SourceRoute, req: IncomingMessage, res: ServerResponse): void {
  const { newsroom, faults } = app;
  const id = route.source.id;
  const updated = newsroom.lastChanged(route.outlet.id);
  const { body, contentType } = feedBody(app, route);
  let validators = {
    etag: `"${createHash("sha256").update(body).digest("base64url").slice(0, 22)}"`,
    // HTTP dates have whole seconds; the body's own timestamp keeps the milliseconds.
    lastModified: rfc822(Math.floor(updated / 1000) * 1000),
  };
  if (faults.has(id, "lying-etag")) {
    const frozen = faults.frozenValidators.get(id) ?? validators;
    faults.frozenValidators.set(id, frozen);
    validators = frozen;
  }
  res.setHeader("cache-control", "no-cache");
  if (app.websub) res.setHeader("link", app.websub.linkHeader(route.source.url));
  if (!faults.has(id, "no-validators")) {
    res.setHeader("etag", validators.etag);
    res.setHeader("last-modified", validators.lastModified);
    if (notModified(req, validators)) {
      res.writeHead(304);
      return void res.end();
    }
  }
  sendText(req, res, 200, contentType, body);
}

/**
 * Backfill: `since` is an event seq (as in the SSE `id:`) or an instant (ISO 8601 or epoch ms);
 * `truncated` says events after `since` were already dropped, so the gap cannot be filled.
 */
function serveHistory(app: App, route: SourceRoute, res: ServerResponse, url: URL): void {
  const raw = url.searchParams.get("since") ?? "0";
  // Seqs are small; instants are epoch ms (13 digits) or ISO 8601.
  const after = /^\d{1,11}$/.test(raw)
    ? { seq: Number(raw) }
    : { ms: /^\d+$/.test(raw) ? Number(raw) : Date.parse(raw) };
  if ("ms" in after && Number.isNaN(after.ms)) {
    throw new SimError(`since must be an event id or an instant, not "${raw}"`);
  }
  const id = route.source.id;
  const result = app.newsroom.history(id, after);
  sendJson(res, 200, {
    source: id,
    now: new Date(app.now()).toISOString(),
    lastSeq: app.newsroom.lastSeq(),
    truncated: result.truncated,
    events: result.events,
  });
}

function sendText(
  req: IncomingMessage,
  res: ServerResponse,
  status: number,
  type: string,
  body: string,
): void {
  res.writeHead(status, { "content-type": type, "content-length": Buffer.byteLength(body) });
  res.end(req.method === "HEAD" ? undefined : body);
}
