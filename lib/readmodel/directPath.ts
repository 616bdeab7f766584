import http, { type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { gzipSync } from "node:zlib";
import { refuseUndecodablePath } from "../api/respond";
import { API_HEADERS, SECURITY_HEADERS } from "../auth/headers";
import { refuseForeignHost } from "../auth/hosts";
import { stampPeer } from "../auth/peer";
import { logger } from "../logger";
import { listAnswer, type PublicAnswer, storyAnswer } from "./http";

/**
 * The public read path answered by the server itself, before Next.js routes the request
 * (docs/decisions/031). GET and HEAD of /api/news and /api/news/{id} get exactly the answer the
 * route handlers give (listAnswer / storyAnswer in http.ts: the same rate limit, validation,
 * read model, headers and metrics), with the checks proxy.ts makes (Host, a path that decodes)
 * and the headers next.config.ts adds, written straight to the socket.
 *
 * Why: Next's pipeline costs ~1.7 ms of CPU a request here (routing, its proxy, a Request and a
 * Response, the body piped through web streams, promise hooks), which at seed 003's 400 req/s
 * is 70 % of the core the server has, and the spike's p99 was 50-95 ms with no ingestion at all.
 * Answered here, a request is a Map lookup and a write.
 *
 * Everything else (other paths, other methods, a trailing slash Next redirects) goes on to Next.
 * Only the server Next listens on (process.env.PORT, which `next start` and `next dev` set
 * before they serve) is served this way, never another server of this process (the built-in
 * simulator's).
 *
 * Compression: identity unless the client accepts gzip and the body is 1 KiB or more; the gzip
 * bytes are made once per payload (by its ETag) and kept, since a spike asks for one payload
 * thousands of times. A gzip answer carries the ETag weakened (W/"…", as nginx does: the bytes
 * differ from the identity answer's) and both carry `Vary: Accept-Encoding`, the one header
 * their body depends on besides the URL.
 */

const LIST_PATH = "/api/news";
const STORY_PREFIX = "/api/news/";
const GZIP_MIN_BYTES = 1024;
/** Gzip bytes kept per ETag: every prebuilt page of ~400 lists' first pages and then some. */
const GZIP_KEPT = 1_000;

const installed = Symbol.for("wirewatch.publicReadDirectPath");
const isNextServer = new WeakMap<http.Server, boolean>();
const gzipped = new Map<string, Buffer>();

/**
 * Answers the public read path directly from now on, on the server Next listens on. Called in
 * instrumentation-node.ts after installPeerStamp (a direct answer stamps the peer itself).
 */
export function installPublicReadDirectPath(): void {
  const proto = http.Server.prototype as unknown as Record<symbol, boolean> & {
    emit: (event: string | symbol, ...args: unknown[]) => boolean;
  };
  if (proto[installed]) return;
  proto[installed] = true;
  const emit = proto.emit;
  proto.emit = function directEmit(this: http.Server, event, ...args) {
    if (event === "request") {
      const [request, response] = args as [IncomingMessage, ServerResponse];
      const route = publicRoute(request);
      if (route && servedByNext(this)) {
        void answerDirectly(request, response, route);
        return true;
      }
    }
    return emit.call(this, event, ...args);
  };
}

type Route = { kind: "list" } | { kind: "story"; rawId: string };

/** The public read route a request is for, or null (it goes to Next). */
export function publicRoute(request: IncomingMessage): Route | null {
  if (request.method !== "GET" && request.method !== "HEAD") return null;
  const url = request.url ?? "";
  const query = url.indexOf("?");
  const path = query < 0 ? url : url.slice(0, query);
  if (path === LIST_PATH) return { kind: "list" };
  if (path.startsWith(STORY_PREFIX)) {
    const rawId = path.slice(STORY_PREFIX.length);
    if (rawId && !rawId.includes("/")) return { kind: "story", rawId };
  }
  return null;
}

function servedByNext(server: http.Server): boolean {
  let known = isNextServer.get(server);
  if (known === undefined) {
    const port = (server.address() as AddressInfo | null)?.port;
    known = port !== undefined && String(port) === process.env.PORT;
    isNextServer.set(server, known);
  }
  return known;
}

/** One public read, start to end; never throws (a failure is a 500 and a log line). */
export async function answerDirectly(
  request: IncomingMessage,
  response: ServerResponse,
  route: Route,
): Promise<void> {
  try {
    stampPeer(request.headers, request.socket?.remoteAddress ?? "unknown");
    const standard = new Request(`http://localhost${request.url}`, {
      method: "GET",
      headers: headersOf(request),
    });
    const refused = refuseForeignHost(standard) ?? refuseUndecodablePath(pathOf(request));
    let answer: PublicAnswer;
    if (refused) answer = refused;
    else if (route.kind === "list") answer = await listAnswer(standard);
    else answer = await storyAnswer(standard, decodeURIComponent(route.rawId));
    await write(request, response, answer);
  } catch (err) {
    logger().error({ err: (err as Error).message, url: request.url }, "public read failed");
    if (!response.headersSent) {
      response.statusCode = 500;
      response.setHeader("content-type", "application/json");
      response.setHeader("cache-control", "no-store");
    }
    response.end(JSON.stringify({ error: { code: "internal", message: "internal error" } }));
  }
}

function pathOf(request: IncomingMessage): string {
  const url = request.url ?? "";
  const query = url.indexOf("?");
  return query < 0 ? url : url.slice(0, query);
}

function headersOf(request: IncomingMessage): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers)) {
    if (value === undefined) continue;
    if (Array.isArray(value)) for (const v of value) headers.append(name, v);
    else headers.set(name, value);
  }
  return headers;
}

async function write(
  request: IncomingMessage,
  response: ServerResponse,
  answer: PublicAnswer,
): Promise<void> {
  for (const { key, value } of SECURITY_HEADERS) response.setHeader(key, value);
  for (const { key, value } of API_HEADERS) response.setHeader(key, value);
  let status: number;
  let body: Uint8Array | null;
  if (answer instanceof Response) {
    status = answer.status;
    answer.headers.forEach((value, name) => {
      response.setHeader(name, value);
    });
    body = new Uint8Array(await answer.arrayBuffer());
  } else {
    status = answer.status;
    for (const [name, value] of Object.entries(answer.headers)) response.setHeader(name, value);
    body = answer.body;
    if (status === 200 && body && body.byteLength >= GZIP_MIN_BYTES) {
      response.setHeader("vary", "Accept-Encoding");
      if (acceptsGzip(request.headers["accept-encoding"])) {
        const etag = answer.headers.etag ?? "";
        body = gzipOnce(etag, body);
        response.setHeader("content-encoding", "gzip");
        if (etag && !etag.startsWith("W/")) response.setHeader("etag", `W/${etag}`);
      }
    }
  }
  response.statusCode = status;
  if (status === 304 || !body) {
    response.end();
    return;
  }
  response.setHeader("content-length", body.byteLength);
  response.end(request.method === "HEAD" ? undefined : body);
}

/** Whether Accept-Encoding allows gzip (a q of 0 refuses it; `*` allows it unless refused). */
export function acceptsGzip(header: string | string[] | undefined): boolean {
  if (!header) return false;
  let gzip: number | null = null;
  let any: number | null = null;
  for (const part of (Array.isArray(header) ? header.join(",") : header).split(",")) {
    const [coding = "", ...params] = part.trim().toLowerCase().split(";");
    const qParam = params.map((p) => p.trim()).find((p) => p.startsWith("q="));
    const q = qParam ? Number(qParam.slice(2)) : 1;
    const weight = Number.isFinite(q) ? q : 0;
    if (coding.trim() === "gzip" || coding.trim() === "x-gzip") gzip = weight;
    else if (coding.trim() === "*") any = weight;
  }
  return (gzip ?? any ?? 0) > 0;
}

function gzipOnce(etag: string, body: Uint8Array): Buffer {
  const kept = etag ? gzipped.get(etag) : undefined;
  if (kept) return kept;
  const made = gzipSync(body);
  if (etag) {
    gzipped.set(etag, made);
    if (gzipped.size > GZIP_KEPT) {
      const oldest = gzipped.keys().next().value;
      if (oldest !== undefined) gzipped.delete(oldest);
    }
  }
  return made;
}
