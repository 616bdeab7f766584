import type { IncomingMessage, ServerResponse } from "node:http";
import { z } from "zod";
import { CHAT_SOURCE_ID } from "./chat";
import { EMBEDDINGS_SOURCE_ID } from "./embeddings";
import {
  FAULT_KINDS,
  type Fault,
  type FaultInput,
  type FaultKind,
  type FaultListing,
  type FaultTable,
} from "./faults";
import type { FleetStats } from "./fleet";
import { parseInput as parse } from "./input";
import {
  type EditInput,
  type Newsroom,
  type PublishInput,
  SimError,
  type SimStory,
} from "./newsroom";
import type { HostRate, LoggedRequest } from "./requestLog";
import type { SimSource, SourceRoute } from "./sources";
import { handleStoriesControl, type StoriesControl } from "./stories/service";
import type { Truth } from "./truth";

/** What a test or an operator can do to a running simulator. Also served under /_control/. */
export interface SimControl {
  /** Adds (or replaces) a fault of that kind on a source. */
  inject(sourceId: string, fault: FaultInput): Fault;
  /** Clears one kind or all faults of a source; returns how many were cleared. */
  clear(sourceId: string, kind?: FaultKind): number;
  clearAll(): void;
  faults(): FaultListing[];
  /** Publishes a story now (fields left out are made up), on the default stream outlet by default. */
  publish(input?: PublishInput): SimStory;
  edit(outletId: string, guid: string, changes?: EditInput): SimStory;
  retract(outletId: string, guid: string): SimStory;
  /** Original stories per minute across all outlets; 0 stops organic news. */
  setRate(perMinute: number): void;
  rate(): number;
  /** Moves simulated time forward, running everything due (stories, stream events, keepalives). */
  advance(ms: number): number;
  /** Simulated now, epoch ms. */
  now(): number;
  /**
   * `stories(outletId)` is an outlet's news, as it always was; the same function also carries
   * the story API (seed 001's provider): `stories.desk`, `stories.addWebhook(…)`, `stories.step(n)`…
   */
  stories: ((outletId: string) => readonly SimStory[]) & StoriesControl;
  /** Open stream connections by source id: shows a collector's reconnects. */
  connections(): Record<string, number>;
  /**
   * The answer key for dedup: every item published so far, per source that carries it (guid and
   * link as served), with its story id and how it was made (truth.ts).
   */
  truth(): Truth;
  /**
   * Requests the simulator received (the control API's own left out), oldest first, the last
   * 10,000: what a politeness check reads. GET /_control/requests?since=<epoch ms>&path=<prefix>.
   */
  requests(options?: { sinceMs?: number; pathPrefix?: string }): LoggedRequest[];
  /**
   * Per Host header, over every request since start (not only the last 10,000): the count and
   * the most that arrived within any 1 s window, busiest first. GET /_control/hosts?top=<n>.
   */
  hostRates(): HostRate[];
  /** The fleet's size, port, answer counts and process cost; null without one. GET /_control/fleet. */
  fleet():
    | ({ size: number; hosts: number; port: number } & FleetStats & {
          /** The simulator process's CPU time since start and its memory now. */
          process: { cpuMs: number; rssMb: number; heapUsedMb: number };
        })
    | null;
}

export function createControl(deps: {
  newsroom: Newsroom;
  faults: FaultTable;
  routes: Map<string, SourceRoute>;
  advance: (ms: number) => void;
  now: () => number;
  connections: () => Record<string, number>;
  /** Runs whatever became due at the current instant (a story published with no lead). */
  settle: () => void;
  stories: StoriesControl;
  /** The story API's source, which has no outlet and so no route. */
  storySource: SimSource;
  truth: () => Truth;
  requests: SimControl["requests"];
  hostRates: SimControl["hostRates"];
  fleet: SimControl["fleet"];
}): SimControl {
  const { newsroom, faults, routes } = deps;
  const route = (sourceId: string) => {
    if (sourceId === deps.storySource.id) return { source: deps.storySource };
    // The embeddings and chat endpoints are no news sources, but take faults as one
    // (simulator/embeddings.ts, simulator/chat.ts).
    if (sourceId === EMBEDDINGS_SOURCE_ID) return { source: { kind: "embeddings" } };
    if (sourceId === CHAT_SOURCE_ID) return { source: { kind: "llm" } };
    const r = routes.get(sourceId);
    if (!r) throw new SimError(`unknown source "${sourceId}"`, 404);
    return r;
  };
  // Bring simulated time up to the wall clock first, so the story is stamped "now", not at the
  // pump's last wake-up; then run what the change made due.
  const act = <T>(change: () => T): T => {
    deps.settle();
    const value = change();
    deps.settle();
    return value;
  };
  return {
    inject: (sourceId, fault) => faults.inject(sourceId, route(sourceId).source.kind, fault),
    clear: (sourceId, kind) => {
      route(sourceId);
      if (kind !== undefined && !FAULT_KINDS.includes(kind)) {
        throw new SimError(`unknown fault kind "${kind}" (kinds: ${FAULT_KINDS.join(", ")})`);
      }
      return faults.clear(sourceId, kind);
    },
    clearAll: () => faults.clearAll(),
    faults: () => faults.list(),
    publish: (input) => act(() => newsroom.publish(input)),
    edit: (outletId, guid, changes) => act(() => newsroom.edit(outletId, guid, changes)),
    retract: (outletId, guid) => act(() => newsroom.retract(outletId, guid)),
    setRate: (perMinute) => act(() => newsroom.setRate(perMinute)),
    rate: () => newsroom.rate,
    advance: (ms) => {
      if (!(ms >= 0)) throw new SimError("advance takes a number of milliseconds ≥ 0");
      deps.advance(ms);
      return deps.now();
    },
    now: () => {
      deps.settle();
      return deps.now();
    },
    connections: deps.connections,
    requests: deps.requests,
    hostRates: deps.hostRates,
    fleet: deps.fleet,
    truth: () => {
      deps.settle();
      return deps.truth();
    },
    stories: Object.assign((outletId: string) => {
      newsroom.outlet(outletId);
      return newsroom.stories(outletId);
    }, deps.stories),
  };
}

const publishSchema = z
  .object({
    outlet: z.string().optional(),
    title: z.string().max(2_000).optional(),
    summary: z.string().max(20_000).optional(),
    category: z.string().max(200).optional(),
    breaking: z.boolean().optional(),
    instruments: z.array(z.string().max(64)).max(100).optional(),
    language: z.enum(["en", "bn"]).optional(),
    pageLeadMs: z.number().int().min(0).max(600_000).optional(),
  })
  .strict();
const storyRefSchema = z.object({
  outlet: z.string(),
  guid: z.string(),
  title: z.string().optional(),
  summary: z.string().optional(),
  pageLagMs: z.number().int().min(0).max(600_000).optional(),
  breaking: z.literal(true).optional(),
});
const rateSchema = z.object({ perMinute: z.number().min(0).max(6_000) });
const advanceSchema = z.object({
  ms: z
    .number()
    .int()
    .min(0)
    .max(7 * 86_400_000),
});

/**
 * The control API: JSON in, JSON out, errors as { error: { code, message } }.
 *
 *   GET    /_control/faults                 → { faults: [{ sourceId, faults: [...] }] }
 *   POST   /_control/faults/:sourceId       { kind, ms?, retryAfter?, calls? } → { sourceId, fault }
 *                                          (sourceId `embeddings`, `llm`: the /v1 endpoints)
 *   DELETE /_control/faults/:sourceId[?kind=K] → { sourceId, cleared }
 *   DELETE /_control/faults                 → { cleared: "all" }
 *   POST   /_control/publish                { outlet?, title?, … } → { story }
 *   POST   /_control/edit                   { outlet, guid, title?, summary?, breaking?: true, pageLagMs? } → { story }
 *   POST   /_control/retract                { outlet, guid } → { story }
 *   GET    /_control/rate  POST { perMinute } → { perMinute }
 *   POST   /_control/advance                { ms } → { now }
 *   GET    /_control/connections            → { connections: { [sourceId]: open streams } }
 *   GET    /_control/truth                  → { now, items: [TruthItem …], counts }
 *
 * The story API (source `story-desk`; its read faults go through /_control/faults/story-desk):
 *
 *   GET    /_control/stories/webhooks       → { webhooks: [{ id, url, secrets, tickers? }], stats }
 *   POST   /_control/stories/webhooks       { url, secrets?, tickers? } → { id, secrets }
 *   DELETE /_control/stories/webhooks/:id   → { id, removed }
 *   POST   /_control/stories/webhook-faults { endpointId?, late?: { minMs, maxMs },
 *                                             duplicate?: { share }, drop?: { share } } → { faults }
 *   DELETE /_control/stories/webhook-faults[?endpoint=ID] → { faults }
 *   POST   /_control/stories/expire-cursors → { epoch } (every cursor issued so far answers 410)
 *   POST   /_control/stories/step           { n? } → { events } (n random desk operations now)
 *   POST   /_control/stories/flush          → { stats } (after every pending delivery finished)
 *   GET    /_control/stories/snapshot       → the desk's state: { open, closed, strong, seq, epoch }
 */
export async function handleControl(
  control: SimControl,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
): Promise<void> {
  const parts = url.pathname.split("/").filter(Boolean).slice(1).map(decodeURIComponent);
  const [what, sourceId] = parts;
  const method = req.method ?? "GET";
  const body = method === "POST" ? await readJson(req) : undefined;
  const reply = (value: unknown) => sendJson(res, 200, value);

  if (what === "stories") {
    return reply(await handleStoriesControl(control.stories, method, parts.slice(1), body, url));
  }
  if (what === "faults" && parts.length <= 2) {
    if (method === "GET" && !sourceId) return reply({ faults: control.faults() });
    if (method === "DELETE" && !sourceId) {
      control.clearAll();
      return reply({ cleared: "all" });
    }
    if (method === "POST" && sourceId) {
      return reply({ sourceId, fault: control.inject(sourceId, body as FaultInput) });
    }
    if (method === "DELETE" && sourceId) {
      const kind = (url.searchParams.get("kind") ?? undefined) as FaultKind | undefined;
      return reply({ sourceId, cleared: control.clear(sourceId, kind) });
    }
  }
  if (parts.length === 1 && method === "POST" && what === "publish") {
    return reply({ story: control.publish(parse(publishSchema, body ?? {})) });
  }
  if (parts.length === 1 && method === "POST" && what === "edit") {
    const { outlet, guid, ...changes } = parse(storyRefSchema, body);
    return reply({ story: control.edit(outlet, guid, changes) });
  }
  if (parts.length === 1 && method === "POST" && what === "retract") {
    const { outlet, guid } = parse(storyRefSchema, body);
    return reply({ story: control.retract(outlet, guid) });
  }
  if (parts.length === 1 && what === "rate") {
    if (method === "POST") control.setRate(parse(rateSchema, body).perMinute);
    if (method === "GET" || method === "POST") return reply({ perMinute: control.rate() });
  }
  if (parts.length === 1 && method === "GET" && what === "connections") {
    return reply({ connections: control.connections() });
  }
  if (parts.length === 1 && method === "GET" && what === "requests") {
    const since = Number(url.searchParams.get("since") ?? 0);
    const pathPrefix = url.searchParams.get("path") ?? undefined;
    return reply({
      requests: control.requests({ sinceMs: Number.isFinite(since) ? since : 0, pathPrefix }),
    });
  }
  if (parts.length === 1 && method === "GET" && what === "hosts") {
    const top = Number(url.searchParams.get("top") ?? 100);
    const rates = control.hostRates();
    return reply({
      hosts: rates.length,
      rates: rates.slice(0, Number.isInteger(top) && top > 0 ? top : 100),
    });
  }
  if (parts.length === 1 && method === "GET" && what === "fleet") {
    return reply({ fleet: control.fleet() });
  }
  if (parts.length === 1 && method === "GET" && what === "truth") {
    return reply(control.truth());
  }
  if (parts.length === 1 && method === "POST" && what === "advance") {
    return reply({ now: new Date(control.advance(parse(advanceSchema, body).ms)).toISOString() });
  }
  throw new SimError(`no control operation ${method} ${url.pathname}`, 404);
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    // Control bodies are a few hundred bytes; 1 MB stops a runaway client, nothing more.
    if (size > 1_000_000) throw new SimError("request body over 1 MB", 413);
    chunks.push(chunk);
  }
  const text = Buffer.concat(chunks).toString("utf8");
  if (text.trim() === "") return undefined;
  try {
    return JSON.parse(text);
  } catch {
    throw new SimError("request body is not JSON");
  }
}

export function sendJson(res: ServerResponse, status: number, value: unknown): void {
  const body = JSON.stringify(value);
  res.writeHead(status, {
    "content-type": "application/json; charset=utf-8",
    "content-length": Buffer.byteLength(body),
    "cache-control": "no-store",
  });
  res.end(body);
}
