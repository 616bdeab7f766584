import { randomBytes } from "node:crypto";
import http, { type IncomingMessage } from "node:http";

/**
 * The socket's peer address, carried to route handlers, which never see the socket
 * (docs/decisions/013). `next start` writes the peer into X-Forwarded-For only when the request
 * came without one (`??=` in next/dist/server/base-server.js, Next 16.4), so any client can name
 * itself there. This process therefore stamps every incoming request with its peer address
 * before Next looks at it, in a header whose value starts with a random token made at start: a
 * client can send the header, but not with a token it cannot know, and the stamp overwrites it.
 */
export const PEER_HEADER = "x-wirewatch-peer";

const globalForPeer = globalThis as unknown as { wirewatchPeerToken?: string };

function token(): string {
  globalForPeer.wirewatchPeerToken ??= randomBytes(16).toString("hex");
  return globalForPeer.wirewatchPeerToken;
}

/** Writes the stamp onto a set of request headers (the server does this; tests too). */
export function stampPeer(headers: Headers | IncomingMessage["headers"], address: string): void {
  const value = `${token()} ${address}`;
  if (headers instanceof Headers) headers.set(PEER_HEADER, value);
  else headers[PEER_HEADER] = value;
}

/** The stamped peer address of a request, or null when it carries no valid stamp. */
export function peerAddress(request: Request): string | null {
  const value = request.headers.get(PEER_HEADER);
  if (!value) return null;
  const space = value.indexOf(" ");
  if (space < 0 || value.slice(0, space) !== token()) return null;
  return value.slice(space + 1) || null;
}

const installed = Symbol.for("wirewatch.peerStamp");

/**
 * Stamps every request any HTTP server in this process receives from now on. Called first thing
 * in instrumentation-node.ts; Next starts handling requests only after register() returns, so
 * only requests that arrived in the first moments of the process (queued while it started) go
 * unstamped, and for those the client is taken from X-Forwarded-For as before (lib/auth/client.ts).
 */
export function installPeerStamp(): void {
  const proto = http.Server.prototype as unknown as Record<symbol, boolean> & {
    emit: (event: string | symbol, ...args: unknown[]) => boolean;
  };
  if (proto[installed]) return;
  proto[installed] = true;
  const emit = proto.emit;
  proto.emit = function stampedEmit(this: http.Server, event, ...args) {
    if (event === "request") {
      const request = args[0] as IncomingMessage;
      stampPeer(request.headers, request.socket?.remoteAddress ?? "unknown");
    }
    return emit.call(this, event, ...args);
  };
}
