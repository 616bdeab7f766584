import type { IncomingMessage } from "node:http";
import { createParser, type EventSourceMessage } from "eventsource-parser";
import { z } from "zod";
import type { Database } from "@/lib/db";
import { logger } from "@/lib/logger";
import { sleep as defaultSleep } from "@/lib/sleep";
import {
  recordActivity,
  recordContent,
  recordDisconnect,
} from "@/workers/collectors/collectorStatus";
import { openEventStream } from "@/workers/collectors/openEventStream";
import type { SourceRef } from "@/workers/collectors/sourceRef";
import { FetchError } from "@/workers/fetcher/classify";
import { httpGet, type Resolver } from "@/workers/fetcher/httpGet";
import { sharedRateBudget } from "@/workers/fetcher/rateBudget";
import { type Delivery, type Writer, writeBatch } from "@/workers/store";

/** A primary-stream event: a new or edited item (with the source's revision), or a retraction. */
const itemEvent = z.object({
  type: z.literal("item"),
  seq: z.number().int().optional(),
  guid: z.string().min(1),
  link: z.string().optional(),
  revision: z.number().int().min(0).optional(),
  title: z.string(),
  summary: z.string().nullish(),
  category: z.string().nullish(),
  breaking: z.boolean().optional(),
  instruments: z.array(z.string()).optional(),
  language: z.string().nullish(),
  publishedAt: z.string().nullish(),
});
const retractionEvent = z.object({
  type: z.literal("retraction"),
  seq: z.number().int().optional(),
  guid: z.string().min(1),
  link: z.string().optional(),
  revision: z.number().int().min(0).optional(),
});
const streamEvent = z.discriminatedUnion("type", [itemEvent, retractionEvent]);
type StreamEvent = z.infer<typeof streamEvent>;

const historyPage = z.object({
  events: z.array(z.unknown()),
  lastSeq: z.number().int().optional(),
  truncated: z.boolean().optional(),
});

export interface StreamWatchOptions {
  /**
   * No byte at all (not even a keepalive) for this long means the connection is dead even if
   * TCP has not noticed: drop it and reconnect. 45 s is three missed 15 s keepalives.
   */
  idleTimeoutMs?: number;
  /** Reconnect delays: full jitter between 0 and min(cap, base·2^n). */
  reconnectBaseMs?: number;
  reconnectCapMs?: number;
  resolver?: Resolver;
  random?: () => number;
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  /** Where events go: writeBatch by default; the stages pass the write buffer. */
  write?: Writer;
}

/**
 * The primary-stream collector: connect, record every keepalive as activity and every item as
 * content, write items (origin `primary`; a revision above 1 is an edit) and retractions through
 * the writer; when the connection drops, reconnect with backoff, and after each connect read the
 * history endpoint as backfill (origin `backfill`: the writer records it and never wakes
 * downstream for it). Runs until `signal` aborts.
 */
export async function watchStream(
  db: Database,
  source: SourceRef,
  collector: string,
  signal: AbortSignal,
  options: StreamWatchOptions = {},
): Promise<void> {
  const log = logger().child({ source: source.id, collector });
  const random = options.random ?? Math.random;
  const sleep = options.sleep ?? defaultSleep;
  let failures = 0;
  // The last event seen, kept across connections so a backfill asks only for what was missed.
  const position = { lastSeq: null as number | null };
  while (!signal.aborted) {
    let res: IncomingMessage | null = null;
    const started = Date.now();
    try {
      // A connect is a request like any poll: it waits for the host's rate budget and is
      // recorded as a fetch attempt, so a stream's error rate shows like a feed's.
      await sharedRateBudget().take(new URL(source.url).host);
      res = await openEventStream(source.url, {
        allowPrivate: source.allowPrivate,
        resolver: options.resolver,
        signal,
      });
      await recordConnect(db, source.id, collector, "ok", 200, Date.now() - started, failures);
      await recordActivity(db, source.id, collector, "connect");
      // Every connect, the first included, reads what was sent while we were not listening
      // (a restart is a long disconnect); duplicates of what we have change nothing.
      if (source.backfillUrl) {
        position.lastSeq = await backfill(
          source,
          collector,
          position.lastSeq,
          options.resolver,
          writerOf(db, options),
        );
      }
      await consume(db, source, collector, res, position, options, signal);
    } catch (err) {
      if (signal.aborted) break;
      // A connection that stayed up a while was healthy: its end starts the backoff over.
      failures = res && Date.now() - started > 30_000 ? 1 : failures + 1;
      const code = err instanceof FetchError ? err.code : "reset";
      log.warn({ code, err: (err as Error).message }, "stream connection failed");
      await recordStreamError(db, source.id, code, (err as Error).message);
      if (!res) {
        const status = err instanceof FetchError ? (err.status ?? null) : null;
        await recordConnect(
          db,
          source.id,
          collector,
          code,
          status,
          Date.now() - started,
          failures - 1,
          (err as Error).message,
        );
      }
    } finally {
      res?.destroy();
    }
    if (signal.aborted) break;
    await recordDisconnect(db, source.id, collector);
    const cap = Math.min(
      options.reconnectCapMs ?? 60_000,
      (options.reconnectBaseMs ?? 1_000) * 2 ** failures,
    );
    await sleep(random() * cap, signal);
  }
  await recordDisconnect(db, source.id, collector).catch(() => undefined);
}

/**
 * Reads events until `signal` aborts (returns) or the stream ends or goes idle (throws, so the
 * caller reconnects). Advances `position.lastSeq` as events are applied.
 */
async function consume(
  db: Database,
  source: SourceRef,
  collector: string,
  res: IncomingMessage,
  position: { lastSeq: number | null },
  options: StreamWatchOptions,
  signal: AbortSignal,
): Promise<void> {
  const idleMs = options.idleTimeoutMs ?? 45_000;
  const pending: (EventSourceMessage | "keepalive")[] = [];
  const parser = createParser({
    onEvent: (e) => pending.push(e),
    onComment: () => pending.push("keepalive"),
  });
  let idle = setTimeout(
    () => res.destroy(new FetchError("timeout", `stream silent for ${idleMs} ms`)),
    idleMs,
  );
  const onAbort = () => res.destroy();
  signal.addEventListener("abort", onAbort, { once: true });
  try {
    for await (const chunk of res) {
      clearTimeout(idle);
      idle = setTimeout(
        () => res.destroy(new FetchError("timeout", `stream silent for ${idleMs} ms`)),
        idleMs,
      );
      parser.feed(chunk.toString("utf8"));
      let keepalive = false;
      const events: StreamEvent[] = [];
      for (const message of pending.splice(0)) {
        if (message === "keepalive") {
          keepalive = true;
          continue;
        }
        const parsed = parseEvent(message.data);
        if (parsed) events.push(parsed);
      }
      if (keepalive && events.length === 0)
        await recordActivity(db, source.id, collector, "keepalive");
      for (const event of events) {
        await apply(writerOf(db, options), source, collector, event, "primary");
        if (event.seq !== undefined) position.lastSeq = Math.max(position.lastSeq ?? 0, event.seq);
      }
      if (events.length > 0) await recordContent(db, source.id, collector);
    }
  } catch (err) {
    if (!signal.aborted) throw err;
  } finally {
    clearTimeout(idle);
    signal.removeEventListener("abort", onAbort);
  }
  if (!signal.aborted) throw new FetchError("reset", "stream ended");
}

/**
 * After a reconnect: what the stream sent while we were away, from its history endpoint. The
 * writer treats it like any delivery (duplicates change nothing) but never notifies for it.
 */
async function backfill(
  source: SourceRef,
  collector: string,
  since: number | null,
  resolver: Resolver | undefined,
  write: Writer,
): Promise<number | null> {
  const url = new URL(source.backfillUrl as string);
  if (since !== null) url.searchParams.set("since", String(since));
  const budget = sharedRateBudget();
  const res = await httpGet(url.toString(), {
    allowPrivate: source.allowPrivate,
    resolver,
    headers: { accept: "application/json" },
    beforeHop: async (hop) => {
      await budget.take(hop.host);
    },
  });
  if (res.status !== 200) throw new FetchError("http_4xx", `backfill answered ${res.status}`);
  const page = historyPage.parse(JSON.parse(res.body.toString("utf8")));
  let seq = since;
  for (const raw of page.events) {
    const event = streamEvent.safeParse(raw);
    if (!event.success) continue;
    await apply(write, source, collector, event.data, "backfill");
    if (event.data.seq !== undefined) seq = Math.max(seq ?? 0, event.data.seq);
  }
  if (page.truncated) {
    logger().warn(
      { source: source.id },
      "backfill history was truncated: some items may be missing",
    );
  }
  return page.lastSeq ?? seq;
}

function parseEvent(data: string): StreamEvent | null {
  try {
    const parsed = streamEvent.safeParse(JSON.parse(data));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

function writerOf(db: Database, options: StreamWatchOptions): Writer {
  return options.write ?? ((deliveries) => writeBatch(db, deliveries));
}

async function apply(
  write: Writer,
  source: SourceRef,
  collector: string,
  event: StreamEvent,
  origin: "primary" | "backfill",
) {
  const base = {
    sourceId: source.id,
    collector,
    origin,
    guid: event.guid,
    link: event.link,
    revision: event.revision,
  };
  let delivery: Delivery;
  if (event.type === "retraction") delivery = { kind: "retract", input: base };
  else {
    const input = {
      ...base,
      title: event.title,
      summary: event.summary ?? undefined,
      category: event.category ?? undefined,
      breaking: event.breaking,
      instruments: event.instruments,
      language: event.language ?? undefined,
      publishedAt: event.publishedAt ?? undefined,
    };
    delivery = { kind: (event.revision ?? 1) > 1 ? "edit" : "observe", input };
  }
  const [outcome] = await write([delivery]);
  return outcome;
}

async function recordStreamError(db: Database, sourceId: string, code: string, message: string) {
  await db.prisma.$executeRaw`
    UPDATE source_state
    SET last_error_code = ${code}, last_error_message = ${message.slice(0, 2_000)},
        last_error_at = now(), updated_at = now()
    WHERE source_id = ${sourceId}`;
}

async function recordConnect(
  db: Database,
  sourceId: string,
  collector: string,
  code: string,
  status: number | null,
  durationMs: number,
  retry: number,
  message?: string,
) {
  await db.prisma.fetchAttempt.create({
    data: {
      sourceId,
      collector,
      startedAt: new Date(Date.now() - durationMs),
      durationMs,
      code,
      httpStatus: status,
      conditional: false,
      retry: Math.max(0, retry),
      message: message?.slice(0, 2_000),
    },
  });
}
