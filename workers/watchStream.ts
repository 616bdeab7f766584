import type { IncomingMessage } from "node:http";
import { StringDecoder } from "node:string_decoder";
import { createParser, type EventSourceMessage } from "eventsource-parser";
import { Backoff, type Clock, systemClock } from "@/lib/backoff";
import type { Database } from "@/lib/db";
import { emit } from "@/lib/events";
import { logger } from "@/lib/logger";
import {
  recordActivity,
  recordContent,
  recordDisconnect,
} from "@/workers/collectors/collectorStatus";
import type { SourceRef } from "@/workers/collectors/sourceRef";
import { delivery, parseEvent, readHistory, streamEvent } from "@/workers/collectors/streamEvents";
import { StreamWrites, type StreamWritesOptions } from "@/workers/collectors/streamWrites";
import { beginRequest, type FetchSourceOptions, openStream } from "@/workers/fetcher";
import { FetchError } from "@/workers/fetcher/classify";
import { type Writer, writeBatch } from "@/workers/store";

export interface StreamWatchOptions {
  /**
   * No byte at all (not even a keepalive) for this long means the connection is dead even if
   * TCP has not noticed: drop it and reconnect. 45 s is three missed 15 s keepalives.
   */
  idleTimeoutMs?: number;
  /** Reconnect delays (lib/backoff, full jitter): the n-th in a row up to min(cap, base·2^(n-1)). */
  reconnectBaseMs?: number;
  reconnectCapMs?: number;
  /** The fetcher's options for the connect and the history (resolver, limits, breaker, budget). */
  fetch?: FetchSourceOptions;
  /** Time for the reconnect back-off and the connection's age (tests inject one). */
  clock?: Clock;
  /** Where events go: writeBatch by default; the stages pass the write buffer. */
  write?: Writer;
  /** How events are batched on their way to the writer (StreamWrites). */
  batch?: StreamWritesOptions;
}

/**
 * A connection that stayed up this long was healthy: its end starts the back-off streak over
 * instead of continuing it. 30 s: twice the 15 s keepalive, longer than any connect-and-drop loop.
 */
const HEALTHY_CONNECTION_MS = 30_000;

/**
 * The primary-stream collector, the whole path of its headlines, until `signal` aborts:
 * connect through the fetcher (disabled? breaker, rate budget, SSRF guard, classified, one
 * fetch_attempts row and fetch:finished event) → the one verdict: a 200 that is not an event
 * stream is a `parse_error` → connected: activity, then the history endpoint as backfill (origin
 * `backfill`: the writer records it and never wakes downstream for it) → events (origin
 * `primary`; a revision above 1 is an edit; retractions) through the writer in small batches,
 * keepalives as activity → when the connection drops: what ended it on the source, then
 * reconnect after lib/backoff's full-jitter delay (docs/decisions/020).
 */
export async function watchStream(
  db: Database,
  source: SourceRef,
  collector: string,
  signal: AbortSignal,
  options: StreamWatchOptions = {},
): Promise<void> {
  const clock = options.clock ?? systemClock;
  const reconnect = new Backoff(
    { baseMs: options.reconnectBaseMs ?? 1_000, capMs: options.reconnectCapMs ?? 60_000 },
    clock,
  );
  // The last event written, kept across connections so a backfill asks only for what was missed.
  let lastSeq: number | null = null;
  while (!signal.aborted) {
    const connect = await openStream(db, source, collector, {
      ...options.fetch,
      reconnects: reconnect.failures,
      signal,
    });
    // 404/410 disabled the source (now or before): nothing to watch until an admin re-enables it.
    if (connect.fetched.code === "disabled") break;
    const res = await judgeConnect(connect, source);
    if (res) {
      const upSince = clock.now();
      lastSeq = await readConnection(db, source, collector, res, lastSeq, options, signal);
      if (clock.now() - upSince >= HEALTHY_CONNECTION_MS) reconnect.reset();
    }
    if (signal.aborted) break;
    await recordDisconnect(db, source.id, collector);
    await reconnect.wait(signal);
  }
  await recordDisconnect(db, source.id, collector).catch(() => undefined);
}

/**
 * The connect's one verdict: a 200 must be an event stream, or it is the source failing
 * (`parse_error`, held against its breaker like a feed that does not parse). The open stream
 * when it is one; null otherwise (closed).
 */
async function judgeConnect(
  connect: Awaited<ReturnType<typeof openStream>>,
  source: SourceRef,
): Promise<IncomingMessage | null> {
  const { stream, fetched } = connect;
  const type = fetched.contentType ?? "";
  const unreadable =
    stream && !type.startsWith("text/event-stream")
      ? `stream: ${source.url} answered 200 ${type || "without a content type"}, not text/event-stream`
      : undefined;
  try {
    await connect.settle(unreadable);
  } catch (err) {
    stream?.destroy();
    throw err;
  }
  if (!stream) {
    if (fetched.attempts > 0) {
      logger().warn(
        { source: source.id, code: fetched.code, err: fetched.message },
        "stream connection failed",
      );
    }
    return null;
  }
  if (unreadable) {
    stream.destroy();
    return null;
  }
  return stream;
}

/**
 * One open connection: activity and stream:connected → the backfill → events until the stream
 * drops (what ended it goes on the source: last_error_*) or `signal` aborts. Every event handed
 * over is written before this returns, the drop's included. Returns the stream's position.
 */
async function readConnection(
  db: Database,
  source: SourceRef,
  collector: string,
  res: IncomingMessage,
  lastSeq: number | null,
  options: StreamWatchOptions,
  signal: AbortSignal,
): Promise<number | null> {
  const write = options.write ?? ((deliveries) => writeBatch(db, deliveries));
  const writes = new StreamWrites(
    write,
    async (batch) => {
      emit("stream:events", { source: source.id, collector, count: batch.length });
      if (batch.some((d) => (d.input as { origin: string }).origin === "primary")) {
        await recordContent(db, source.id, collector);
      }
    },
    options.batch,
  );
  writes.lastSeq = lastSeq;
  const connectedAt = Date.now();
  let code = "stopped";
  emit("stream:connected", { source: source.id, collector });
  try {
    await recordActivity(db, source.id, collector, "connect");
    // Every connect, the first included, reads what was sent while we were not listening
    // (a restart is a long disconnect); duplicates of what we have change nothing.
    if (source.backfillUrl) await backfill(db, source, collector, writes, options.fetch);
    await consume(db, source, collector, res, writes, options.idleTimeoutMs ?? 45_000, signal);
  } catch (err) {
    if (!signal.aborted) {
      code = err instanceof FetchError ? err.code : "reset";
      logger().warn(
        { source: source.id, collector, code, err: (err as Error).message },
        "stream connection ended",
      );
      await recordStreamError(db, source.id, code, (err as Error).message);
    }
  } finally {
    res.destroy();
    emit("stream:disconnected", {
      source: source.id,
      collector,
      code,
      connectedSeconds: (Date.now() - connectedAt) / 1000,
    });
  }
  return writes.lastSeq;
}

/**
 * Reads events until `signal` aborts (returns) or the stream ends or goes idle (throws, so the
 * caller reconnects). What waits in the current batch is written either way.
 */
async function consume(
  db: Database,
  source: SourceRef,
  collector: string,
  res: IncomingMessage,
  writes: StreamWrites,
  idleMs: number,
  signal: AbortSignal,
): Promise<void> {
  const pending: (EventSourceMessage | "keepalive")[] = [];
  const parser = createParser({
    onEvent: (e) => pending.push(e),
    onComment: () => pending.push("keepalive"),
  });
  const silent = () => res.destroy(new FetchError("timeout", `stream silent for ${idleMs} ms`));
  let idle = setTimeout(silent, idleMs);
  const onAbort = () => res.destroy();
  signal.addEventListener("abort", onAbort, { once: true });
  let dropped: unknown = null;
  let opening = true;
  // A character may arrive split across two reads (any Bangla letter is 3 bytes): the decoder
  // keeps a partial one for the next read instead of turning each half into U+FFFD.
  const decoder = new StringDecoder("utf8");
  try {
    for await (const chunk of res) {
      clearTimeout(idle);
      idle = setTimeout(silent, idleMs);
      let text: string = decoder.write(chunk as Buffer);
      // The SSE spec drops one BOM at the start of a stream; eventsource-parser 3 (the last that
      // declares Node 20, decision 032) only drops it as raw bytes, and decoded it is U+FEFF,
      // which would make the first event's first line an unknown field and lose that event.
      if (opening) {
        opening = false;
        if (text.startsWith("\uFEFF")) text = text.slice(1);
      }
      parser.feed(text);
      let keepalive = false;
      let events = 0;
      for (const message of pending.splice(0)) {
        if (message === "keepalive") {
          keepalive = true;
          continue;
        }
        const event = parseEvent(message.data);
        if (!event) continue;
        events++;
        await writes.add(delivery(source, collector, event, "primary"), event.seq);
      }
      if (keepalive && events === 0) await recordActivity(db, source.id, collector, "keepalive");
    }
  } catch (err) {
    if (!signal.aborted) dropped = err;
  } finally {
    clearTimeout(idle);
    signal.removeEventListener("abort", onAbort);
  }
  // Dropped, ended or stopped: what was read is written before the reconnect.
  await writes.flush();
  if (dropped) throw dropped;
  if (!signal.aborted) throw new FetchError("reset", "stream ended");
}

/**
 * After a connect: what the stream sent while we were away, from its history endpoint, as a
 * request through the fetcher (rate budget, guard, retries, recorded, its own verdict: a page
 * that is not the history's JSON is a `parse_error`). The writer treats it like any delivery
 * (duplicates change nothing) but never notifies for it. A failed backfill drops the connection:
 * the reconnect reads it again rather than leave a gap.
 */
async function backfill(
  db: Database,
  source: SourceRef,
  collector: string,
  writes: StreamWrites,
  fetchOptions: FetchSourceOptions = {},
): Promise<void> {
  const url = new URL(source.backfillUrl as string);
  if (writes.lastSeq !== null) url.searchParams.set("since", String(writes.lastSeq));
  const request = await beginRequest(db, source, collector, url.toString(), {
    ...fetchOptions,
    accept: "application/json",
  });
  const { body, code, message } = request.fetched;
  if (!body) {
    await request.settle();
    throw new FetchError(code, `backfill: ${(message ?? code).replace(/^fetcher: /, "")}`);
  }
  const page = readHistory(body);
  if ("unreadable" in page) {
    await request.settle(page.unreadable);
    throw new FetchError("parse_error", page.unreadable);
  }
  await request.settle();
  for (const raw of page.events) {
    const event = streamEvent.safeParse(raw);
    if (event.success)
      await writes.add(delivery(source, collector, event.data, "backfill"), event.data.seq);
  }
  await writes.flush();
  if (page.lastSeq !== undefined) writes.lastSeq = page.lastSeq;
  if (page.truncated) {
    logger().warn(
      { source: source.id },
      "backfill history was truncated: some items may be missing",
    );
  }
}

/** What ended an open connection (a drop, an idle timeout): not a request, so not an attempt. */
async function recordStreamError(db: Database, sourceId: string, code: string, message: string) {
  await db.prisma.$executeRaw`
    UPDATE source_state
    SET last_error_code = ${code}, last_error_message = ${message.slice(0, 2_000)},
        last_error_at = now(), updated_at = now()
    WHERE source_id = ${sourceId}`;
}
