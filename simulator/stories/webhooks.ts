import { setMaxListeners } from "node:events";
import { setTimeout as sleep } from "node:timers/promises";
import { Webhook } from "standardwebhooks";
import { SimError } from "../newsroom";
import type { Random } from "../random";
import type { DeskEvent } from "./desk";

/**
 * Delivers a desk's events to webhook endpoints the way seed 001 warns they arrive: signed per
 * Standard Webhooks, retried with backoff, and on demand late (out of order), twice or never.
 * Every delivery is its own async send, so several are in flight at once and a consumer's
 * handlers race each other as they would behind a real provider.
 *
 * Retries follow Standard Webhooks' advice except for one simplification: a 4xx other than 408
 * and 429 is given up at once (the receiver said the request itself is wrong; retrying the same
 * body cannot help), where real senders often retry those too.
 */

export interface WebhookEndpoint {
  id: string;
  url: string;
  /** "whsec_" + base64; every active secret signs (several while one is rotated out). */
  secrets: string[];
  /** Only events of these tickers; absent = all. */
  tickers?: string[];
}

export interface WebhookFaults {
  /** Each delivery waits a random extra [minMs, maxMs] before its first attempt: reorders. */
  late?: { minMs: number; maxMs: number };
  /** This share of deliveries sends a second, independently delayed copy. */
  duplicate?: { share: number };
  /** This share of deliveries is never sent: the lost webhook catch-up must find. */
  drop?: { share: number };
}

export interface DeliveryStats {
  /** HTTP attempts made, retries included. */
  sent: number;
  /** Deliveries (copies) that got a 2xx. */
  succeeded: number;
  /** Deliveries that gave up: out of attempts, a 4xx, or stopped. */
  failed: number;
  /** Attempts after the first. */
  retried: number;
  dropped: number;
  duplicated: number;
}

export interface WebhookSenderOptions {
  /** Decides drop, duplicate and late; same seed and same events → the same faults. */
  random: Random;
  /** Wall clock for webhook-timestamp (receivers reject signatures more than 5 min off). */
  now?: () => number;
  /** Per attempt (default 10 s). */
  timeoutMs?: number;
  /** Attempts per delivery, the first included (default 12). */
  maxAttempts?: number;
  /** First retry delay, doubled each time (default 250 ms) … */
  backoffMs?: number;
  /** … up to this (default 30 s). */
  maxBackoffMs?: number;
}

const emptyStats = (): DeliveryStats => ({
  sent: 0,
  succeeded: 0,
  failed: 0,
  retried: 0,
  dropped: 0,
  duplicated: 0,
});

export class WebhookSender {
  readonly #o: Required<WebhookSenderOptions>;
  readonly #endpoints = new Map<string, WebhookEndpoint>();
  readonly #stats = new Map<string, DeliveryStats>();
  readonly #faults = new Map<string, WebhookFaults>();
  #globalFaults: WebhookFaults = {};
  readonly #pending = new Set<Promise<void>>();
  #stopping = unlimitedController();
  #nextId = 1;

  constructor(options: WebhookSenderOptions) {
    this.#o = {
      now: Date.now,
      timeoutMs: 10_000,
      maxAttempts: 12,
      backoffMs: 250,
      maxBackoffMs: 30_000,
      ...options,
    };
  }

  add(endpoint: {
    url: string;
    secrets: string[];
    tickers?: string[];
    id?: string;
  }): WebhookEndpoint {
    if (endpoint.secrets.length === 0) throw new SimError("a webhook endpoint needs a secret");
    for (const secret of endpoint.secrets) new Webhook(secret); // throws on a malformed secret
    const id = endpoint.id ?? `wh_${this.#nextId++}`;
    const added: WebhookEndpoint = {
      id,
      url: endpoint.url,
      secrets: [...endpoint.secrets],
      ...(endpoint.tickers ? { tickers: [...endpoint.tickers] } : {}),
    };
    this.#endpoints.set(id, added);
    if (!this.#stats.has(id)) this.#stats.set(id, emptyStats());
    return structuredClone(added);
  }

  /** Stops new deliveries to it; those in flight finish. */
  remove(id: string): boolean {
    this.#faults.delete(id);
    return this.#endpoints.delete(id);
  }

  endpoints(): WebhookEndpoint[] {
    return [...this.#endpoints.values()].map((e) => structuredClone(e));
  }

  /** Replaces the faults of one endpoint, or the global ones (which an endpoint's override). */
  setFaults(faults: WebhookFaults, endpointId?: string): void {
    if (endpointId === undefined) this.#globalFaults = { ...faults };
    else {
      if (!this.#endpoints.has(endpointId)) throw new SimError(`no webhook ${endpointId}`, 404);
      this.#faults.set(endpointId, { ...faults });
    }
  }

  clearFaults(endpointId?: string): void {
    if (endpointId === undefined) {
      this.#globalFaults = {};
      this.#faults.clear();
    } else this.#faults.delete(endpointId);
  }

  faults(): { global: WebhookFaults; endpoints: Record<string, WebhookFaults> } {
    return {
      global: structuredClone(this.#globalFaults),
      endpoints: Object.fromEntries([...this.#faults].map(([id, f]) => [id, structuredClone(f)])),
    };
  }

  /** By endpoint id (removed endpoints included). */
  stats(): Record<string, DeliveryStats> {
    return Object.fromEntries([...this.#stats].map(([id, s]) => [id, { ...s }]));
  }

  /** Deliveries (copies) not yet finished, retries included. */
  inFlight(): number {
    return this.#pending.size;
  }

  /**
   * Queues the event for every endpoint that wants its ticker. Every random decision is taken
   * here, synchronously and in publication order, so faults are reproducible from the seed even
   * though the sends themselves race.
   */
  deliver(event: DeskEvent): void {
    const body = JSON.stringify(event);
    for (const endpoint of this.#endpoints.values()) {
      if (endpoint.tickers && !endpoint.tickers.includes(event.ticker)) continue;
      const stats = this.#stats.get(endpoint.id) as DeliveryStats;
      const faults = { ...this.#globalFaults, ...this.#faults.get(endpoint.id) };
      const { random } = this.#o;
      if (faults.drop && random.chance(faults.drop.share)) {
        stats.dropped++;
        continue;
      }
      const copies = faults.duplicate && random.chance(faults.duplicate.share) ? 2 : 1;
      if (copies === 2) stats.duplicated++;
      for (let c = 0; c < copies; c++) {
        const delay = faults.late ? random.int(faults.late.minMs, faults.late.maxMs) : 0;
        this.#track(this.#send(endpoint, event.id, body, delay, stats));
      }
    }
  }

  /** Resolves when every delivery, retries included, has succeeded or given up. */
  async flush(): Promise<void> {
    while (this.#pending.size > 0) await Promise.allSettled([...this.#pending]);
  }

  /** Aborts everything in flight and waiting; the sender can be used again afterwards. */
  async stop(): Promise<void> {
    this.#stopping.abort();
    await this.flush();
    this.#stopping = unlimitedController();
  }

  #track(delivery: Promise<void>): void {
    this.#pending.add(delivery);
    delivery.finally(() => this.#pending.delete(delivery));
  }

  async #send(
    endpoint: WebhookEndpoint,
    msgId: string,
    body: string,
    delayMs: number,
    stats: DeliveryStats,
  ): Promise<void> {
    const stopping = this.#stopping.signal;
    const { maxAttempts, backoffMs, maxBackoffMs, timeoutMs } = this.#o;
    const wait = (ms: number) =>
      ms <= 0
        ? Promise.resolve(!stopping.aborted)
        : sleep(ms, true, { signal: stopping }).catch(() => false);
    if (!(await wait(delayMs))) return void stats.failed++;
    for (let attempt = 1; ; attempt++) {
      if (attempt > 1) stats.retried++;
      stats.sent++;
      const outcome = await this.#attempt(endpoint, msgId, body, timeoutMs, stopping);
      if (outcome === "ok") return void stats.succeeded++;
      if (outcome === "give-up" || attempt >= maxAttempts || stopping.aborted) {
        return void stats.failed++;
      }
      // 0.25 s, 0.5, 1, 2, 4 … capped: a receiver that is down for a deploy gets the event
      // within a second or two of coming back, one that is down for long is not hammered.
      const backoff = Math.min(maxBackoffMs, backoffMs * 2 ** (attempt - 1));
      if (!(await wait(backoff))) return void stats.failed++;
    }
  }

  /** One signed POST with a fresh timestamp; the webhook-id stays the event id across retries. */
  async #attempt(
    endpoint: WebhookEndpoint,
    msgId: string,
    body: string,
    timeoutMs: number,
    stopping: AbortSignal,
  ): Promise<"ok" | "retry" | "give-up"> {
    const at = new Date(this.#o.now());
    const signature = endpoint.secrets
      .map((secret) => new Webhook(secret).sign(msgId, at, body))
      .join(" ");
    try {
      const res = await fetch(endpoint.url, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          "webhook-id": msgId,
          "webhook-timestamp": String(Math.floor(at.getTime() / 1000)),
          "webhook-signature": signature,
        },
        body,
        signal: AbortSignal.any([stopping, AbortSignal.timeout(timeoutMs)]),
      });
      await res.arrayBuffer().catch(() => undefined);
      if (res.ok) return "ok";
      const retryable = res.status < 400 || res.status >= 500 || [408, 429].includes(res.status);
      return retryable ? "retry" : "give-up";
    } catch {
      return "retry"; // network error or timeout
    }
  }
}

/** Every delivery in flight listens on it; hundreds at once are expected, not a leak. */
function unlimitedController(): AbortController {
  const controller = new AbortController();
  setMaxListeners(0, controller.signal);
  return controller;
}

/** A Standard Webhooks secret ("whsec_" + base64 of 24 bytes), reproducible from a Random. */
export function makeSecret(random: Random): string {
  const bytes = Buffer.alloc(24);
  for (let i = 0; i < bytes.length; i++) bytes[i] = random.int(0, 255);
  return `whsec_${bytes.toString("base64")}`;
}
