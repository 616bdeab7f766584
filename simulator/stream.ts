import type { ServerResponse } from "node:http";
import type { FaultKind, FaultTable } from "./faults";
import type { StreamEvent } from "./newsroom";

/** Faults answered at connect time, which therefore also end the streams already open. */
const ENDS_STREAMS: ReadonlySet<FaultKind> = new Set<FaultKind>(["503", "429", "blackhole"]);

interface Connection {
  sourceId: string;
  res: ServerResponse;
}

/** One SSE message; `data` is a single line because JSON.stringify never emits raw newlines. */
export function formatEvent(event: StreamEvent): string {
  return `id: ${event.seq}\nevent: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;
}

/**
 * The primary streams' open connections. Items go out as they are emitted; keepalives are SSE
 * comment lines, which carry no event, so a client sees connection activity without content.
 */
export class StreamHub {
  readonly #connections = new Set<Connection>();

  constructor(
    private readonly faults: FaultTable,
    private readonly now: () => number,
  ) {
    faults.onInject((sourceId, fault) => {
      if (fault.kind === "reset") this.reset(sourceId);
      // A server that now refuses or swallows new connections has also lost the ones it had
      // (a 503 from a restarting backend, a load balancer shedding, a dead host): end them, so
      // the client's reconnect meets the fault instead of the old stream going on untouched.
      else if (ENDS_STREAMS.has(fault.kind)) this.end(sourceId);
    });
  }

  /** Opens a stream; with Last-Event-ID it first replays what the client missed. */
  attach(sourceId: string, res: ServerResponse, missed: StreamEvent[]): void {
    res.writeHead(200, {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-cache, no-transform",
      connection: "keep-alive",
      // Proxies such as nginx buffer responses unless told not to; a buffered stream looks stalled.
      "x-accel-buffering": "no",
    });
    res.flushHeaders();
    const connection = { sourceId, res };
    this.#connections.add(connection);
    // The response's close, not the request's: it fires when the client goes away mid-stream.
    res.on("close", () => this.#connections.delete(connection));
    if (this.faults.has(sourceId, "stall")) return;
    // A reconnecting client waits 1 s, long enough not to hammer and short enough to lose little.
    res.write(`retry: 1000\n: connected ${new Date(this.now()).toISOString()}\n\n`);
    for (const event of missed) res.write(formatEvent(event));
  }

  broadcast(event: StreamEvent): void {
    this.#send(event.source, formatEvent(event));
  }

  keepalive(): void {
    const line = `: keepalive ${new Date(this.now()).toISOString()}\n\n`;
    for (const sourceId of new Set([...this.#connections].map((c) => c.sourceId))) {
      this.#send(sourceId, line);
    }
  }

  /** Open stream connections per source id. */
  counts(): Record<string, number> {
    const counts: Record<string, number> = {};
    for (const c of this.#connections) counts[c.sourceId] = (counts[c.sourceId] ?? 0) + 1;
    return counts;
  }

  reset(sourceId: string): void {
    for (const c of this.#connections) {
      if (c.sourceId === sourceId) {
        c.res.socket?.resetAndDestroy();
        this.#connections.delete(c);
      }
    }
  }

  /** Ends the source's open streams cleanly (the response ends; the socket is not reset). */
  end(sourceId: string): void {
    for (const c of this.#connections) {
      if (c.sourceId === sourceId) {
        c.res.end();
        this.#connections.delete(c);
      }
    }
  }

  closeAll(): void {
    for (const c of this.#connections) c.res.destroy();
    this.#connections.clear();
  }

  #send(sourceId: string, text: string): void {
    // A stalled stream drops what it would have sent: the client must notice and backfill.
    if (this.faults.has(sourceId, "stall")) return;
    for (const c of this.#connections) {
      if (c.sourceId === sourceId && !c.res.destroyed) c.res.write(text);
    }
  }
}
