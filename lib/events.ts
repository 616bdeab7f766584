import { logger } from "./logger";

/**
 * Typed lifecycle events: business code says what happened, once, at the place it happened;
 * metrics (lib/metrics/subscriptions.ts), logs and the dashboard's live state subscribe. Business code never
 * imports prom-client.
 *
 * emit() cannot throw and never waits: a subscriber that throws (or rejects) is logged and the
 * others still run, so a broken metric can never fail a write or a fetch. Subscribers run
 * synchronously in the emitter's turn and must stay cheap (a counter increment, not I/O).
 *
 * The bus lives on globalThis: Next.js bundles route handlers and instrumentation separately,
 * so a module-level emitter would be two emitters in one process, and workers started by
 * instrumentation would emit into one that the metrics route never hears.
 */
export interface EventMap {
  /** One delivery through the writer (workers/store writeBatch), rejects included. */
  "observation:written": { source: string; collector: string; origin: string; result: string };
  /** One fetch attempt, retries included (workers/fetcher recordAttempt). */
  "fetch:finished": {
    source: string;
    collector: string;
    /** The stable fetch code (workers/fetcher/classify.ts FETCH_CODES). */
    code: string;
    status: number | null;
    bytes: number;
    durationSeconds: number;
  };
  /**
   * One look at a page source (workers/refreshPage.ts): read as served ("http") or rendered in
   * headless Chromium ("browser"), its CPU time, and how many of its requests were refused.
   */
  "page:looked": { source: string; mode: "http" | "browser"; cpuSeconds: number; blocked: number };
  /** A feed document held more entries than FEED_MAX_ENTRIES; `count` were left out. */
  "feed:capped": { source: string; count: number };
  /** A producer had to wait for room in a bounded buffer (backpressure). */
  "buffer:waited": { stage: string };
  /** Deliveries a buffer refused (it was closing, or a wait was cut short). */
  "buffer:dropped": { stage: string; count: number };
  /**
   * Queue lifecycle (workers/queue). One event per claim statement, not per job: a claim of 1,000
   * jobs is one event carrying their waits, so subscribers stay cheap at 20k jobs/s.
   */
  "job:claimed": {
    queue: string;
    workerId: string;
    count: number;
    /** Of `count`, jobs whose previous lease had run out (a worker died holding them). */
    reclaimed: number;
    /** How long each claimed job had been due, in ms (run_at to claim, on the DB clock). */
    waitsMs: number[];
  };
  /** A queue worker started: the queues it claims from (metrics show their series at 0). */
  "queue:started": { workerId: string; queues: string[] };
  /** A job's handler finished and its completion (or reschedule) was written. */
  "job:completed": { queue: string; durationMs: number; rescheduled: boolean };
  /**
   * A handler failed; the job retries after `retryInSeconds`, or is dead (see job:dead).
   * durationMs: from its claim to the failure (the handler's run, before the failure's write).
   */
  "job:failed": {
    queue: string;
    attempt: number;
    retryInSeconds: number | null;
    error: string;
    durationMs: number;
  };
  /** A job was parked as a dead letter (attempts spent, or a permanent error). */
  "job:dead": { queue: string; attempt: number; error: string; workerId: string; jobId: string };
  /** Leases found expired by the sweeper: jobs due again (or dead when out of attempts). */
  "job:expired": {
    queue: string;
    count: number;
    /** Of `count`, jobs out of attempts: parked as dead letters. */
    parked: number;
    leaseAgesMs: number[];
    /** The worker whose sweeper found them (not the one that held them). */
    workerId: string;
  };
  /** Leases handed back at stop (due at once for another worker). */
  "job:released": { queue: string; count: number; workerId: string };
  /** A held lease this worker could no longer extend; its handler was aborted. */
  "job:lost": { queue: string; reason: string; workerId: string; jobId: string };
  /** A source's breaker opened (failures in a row reached the threshold) or reopened after a probe. */
  "breaker:opened": {
    source: string;
    code: string;
    failures: number;
    openForSeconds: number;
    reopened: boolean;
  };
  /** A source's breaker closed: a success after it had been open (or half-open). */
  "breaker:closed": { source: string };
  /** The breaker disabled a source for good (failures past the disable threshold). */
  "breaker:disabled": { source: string; code: string };
  /** A stream connection was opened (through the fetcher; its attempt is a fetch:finished too). */
  "stream:connected": { source: string; collector: string };
  /** A stream connection ended (dropped, failed, or stopped), after `connectedSeconds`. */
  "stream:disconnected": {
    source: string;
    collector: string;
    code: string;
    connectedSeconds: number;
  };
  /** Events read from a stream and handed to the writer (one event per batch written). */
  "stream:events": { source: string; collector: string; count: number };
  /**
   * One delivery to POST /api/webhooks/stories (workers/stories/receiveWebhook). outcome:
   * accepted (first delivery, recorded), duplicate (event id seen before), ignored (a ticker the
   * source does not follow), rejected (401/413/400: reason says why), failed (5xx: not recorded,
   * the sender retries). lagSeconds: receipt minus the event's publication, for accepted ones.
   */
  "story:webhook": {
    source: string;
    outcome: "accepted" | "duplicate" | "ignored" | "rejected" | "failed";
    reason: string;
    lagSeconds: number | null;
  };
  /**
   * One decision of the dedup stage (workers/dedup/stage.ts), a re-run of a job already decided
   * not included. stage: what linked it ('url' | 'exact' | 'near' | 'meaning'), 'near' for a
   * pair sent to review, null for unique and removed; outcome: 'unique' | 'duplicate' |
   * 'review' | 'removed'; ms: the decision's time in the stage, lookups and writes included.
   */
  "dedup:decided": { stage: string | null; outcome: string; ms: number };
  /** Items embedded and stored by one model in one call of the embed stage (workers/embed). */
  "embed:done": { model: string; items: number; seconds: number };
  /** A call of the embed stage that stored nothing; `code` is EmbeddingError's (or "error"). */
  "embed:failed": { model: string; items: number; code: string };
  /** One call to a supplier (lib/embed ledger): embeddings now, extraction later. */
  "provider:call": {
    purpose: string;
    provider: string;
    model: string;
    ok: boolean;
    /** The HTTP status, or null when no answer came (timeout, refused). */
    status: number | null;
    costUsd: number;
    inputTokens: number;
    outputTokens: number;
    latencyMs: number;
    /** "ok", "error" (an embedding call), or an extraction failure's code. */
    outcome: string;
    /** An extraction's correction retry. */
    correction: boolean;
  };
  /**
   * One extraction of an item settled (lib/extract chain): by which provider, after how many
   * attempts, whether it fell over from the first of the chain; or every provider failed.
   */
  "extract:done": {
    provider: string | null;
    model: string | null;
    ok: boolean;
    fellOver: boolean;
    attempts: number;
    costUsd: number;
  };
  /**
   * A read model version was built (workers/readmodel): how long, how much, and how stale the
   * stories that changed in it were (seconds from their fetch to this build's finish).
   */
  "readmodel:built": {
    modelVersion: number;
    seconds: number;
    stories: number;
    changed: number;
    payloads: number;
    bytes: number;
    /** One per changed story: fetch → available in the read model. */
    lagSeconds: number[];
    trigger: string;
  };
  "readmodel:failed": { seconds: number; error: string };
  /** One public read request answered (lib/readmodel): route kind, outcome, time to first byte. */
  "readmodel:request": {
    route: "list" | "story" | "page";
    outcome: "hit" | "miss" | "stale" | "not_modified" | "not_found" | "error" | "rate_limited";
    seconds: number;
  };
  /** The store in use changed: Redis down → this process's memory, and back. */
  "readmodel:store": { kind: "redis" | "memory"; fallback: boolean; error: string | null };
  /** A paid provider's daily budget was reached (it is skipped until the next UTC day). */
  "extract:budget": { provider: string; spentUsd: number; budgetUsd: number };
  /** One hybrid search answered (lib/search); model null: full text only. */
  "search:done": { seconds: number; model: string | null; backend: string; hits: number };
  /** A model's backfill: canonical items still without its vector (workers/embed/backfill). */
  "embed:backfill": { model: string; remaining: number; embedded: number; canonical: number };
  /** A one-time "story became strong" notification: sent, or why not (workers/stories/notify). */
  "story:notification": {
    source: string;
    outcome: "sent" | "already_claimed" | "backfill" | "failed";
  };
  /**
   * One POST to a WebSub callback (workers/websub/receivePush.ts), by the source its token names
   * ("unknown" when none). outcome: accepted (signed, read and written) or why not: its
   * signature missing or bad, no subscription at the callback, one not active or its source off
   * (410), a body that is no feed, over 10 MiB, or not written (503, the hub retries).
   * storeSeconds: from its arrival at the callback to its entries written, for accepted ones.
   */
  "websub:push": {
    source: string;
    outcome:
      | "accepted"
      | "missing_signature"
      | "bad_signature"
      | "unknown_callback"
      | "not_subscribed"
      | "source_off"
      | "parse_error"
      | "too_large"
      | "not_written";
    storeSeconds: number | null;
  };
  /**
   * A hub's intent verification settled (workers/websub): verified (the challenge echoed), denied
   * (hub.mode=denied), failed (none came within 10 minutes of the request), refused (answered
   * 404: nothing waits for that mode, topic or token). mode: what was verified; "other" for a
   * refused request naming no mode we know.
   */
  "websub:verification": {
    source: string;
    mode: "subscribe" | "unsubscribe" | "other";
    outcome: "verified" | "denied" | "failed" | "refused";
  };
  /**
   * A lease renewal settled (workers/websub): renewed (the hub verified it), refused (the hub
   * answered the request with no 2xx), unreachable (no answer), unverified (accepted, never
   * verified within 10 minutes). A renewal that did not succeed is asked again a minute later.
   */
  "websub:renewal": {
    source: string;
    outcome: "renewed" | "refused" | "unreachable" | "unverified";
  };
}

export type EventName = keyof EventMap;
export type Listener<E extends EventName> = (payload: EventMap[E]) => void;

interface Bus {
  listeners: Map<EventName, Set<Listener<EventName>>>;
}

const globalForEvents = globalThis as unknown as { wirewatchEvents?: Bus };

function bus(): Bus {
  globalForEvents.wirewatchEvents ??= { listeners: new Map() };
  return globalForEvents.wirewatchEvents;
}

/** Subscribes; returns the unsubscribe. */
export function on<E extends EventName>(event: E, listener: Listener<E>): () => void {
  const listeners = bus().listeners;
  let set = listeners.get(event);
  if (!set) {
    set = new Set();
    listeners.set(event, set);
  }
  set.add(listener as Listener<EventName>);
  return () => {
    set.delete(listener as Listener<EventName>);
  };
}

/** Tells every subscriber; never throws, whatever a subscriber does. */
export function emit<E extends EventName>(event: E, payload: EventMap[E]): void {
  const set = bus().listeners.get(event);
  if (!set) return;
  for (const listener of set) {
    try {
      const result: unknown = (listener as Listener<E>)(payload);
      if (result instanceof Promise) result.catch((err) => subscriberFailed(event, err));
    } catch (err) {
      subscriberFailed(event, err);
    }
  }
}

function subscriberFailed(event: EventName, err: unknown): void {
  try {
    logger().error({ err, event }, "event subscriber failed (ignored)");
  } catch {
    // Not even the logger: the worker goes on regardless.
  }
}

/**
 * The labels of a delivery given to the writer, read defensively: a rejected delivery may have
 * no source, or a URL where the source id belongs. lib/metrics bounds the values again.
 */
export function deliveryLabels(input: unknown): {
  source: string;
  collector: string;
  origin: string;
} {
  const o = (typeof input === "object" && input !== null ? input : {}) as Record<string, unknown>;
  const text = (v: unknown) => (typeof v === "string" && v !== "" ? v : "unknown");
  return { source: text(o.sourceId), collector: text(o.collector), origin: text(o.origin) };
}
