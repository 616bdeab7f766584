import { createHash, createHmac, randomBytes } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";

/**
 * The simulator's WebSub hub (W3C WebSub §5–7), for tests and the embedded default: feeds name it
 * in a `Link: <…/hub>; rel="hub"` header when the simulator runs with `websubHub: true`. It
 * accepts (un)subscription requests, verifies intent on the callback (GET with a challenge that
 * must come back verbatim), keeps each subscription for its lease in simulated time, and POSTs
 * the topic's feed, signed with `X-Hub-Signature: sha256=…` when a secret was given, whenever
 * the outlet's feed changes. Faults: push with a bad signature, or none.
 */
export const HUB_PATH = "/hub";

/** How often (simulated ms) the hub looks for feeds that changed: the push's added latency. */
export const HUB_CHECK_MS = 100;

/** A topic the hub can push: when its feed last changed, and the feed as served. */
export interface HubTopic {
  lastChanged(): number;
  render(): { body: string; contentType: string };
}

export interface WebSubHubOptions {
  /** The hub's own URL (`<simulator>/hub`). */
  url: string;
  /** Simulated now, epoch ms (leases run in simulated time). */
  now: () => number;
  /** The feed at a topic URL, or null when the simulator serves none there. */
  topic: (url: string) => HubTopic | null;
  /** Lease granted when none is asked (default 1 h) and the most granted (default 10 days). */
  defaultLeaseSeconds?: number;
  maxLeaseSeconds?: number;
}

export type HubFault = "bad-signature" | "no-signature";

export interface HubSubscription {
  topic: string;
  callback: string;
  leaseSeconds: number;
  expiresAt: number;
  /** Status of the last push to it (0 when the callback could not be reached). */
  lastPushStatus: number | null;
  pushes: number;
}

interface Held extends HubSubscription {
  secret: string | null;
  /** The topic's lastChanged() when it was last pushed (or verified), and the body's hash. */
  sentChange: number;
  sentHash: string | null;
}

export interface HubStats {
  requests: number;
  refused: number;
  verified: number;
  verificationsFailed: number;
  pushes: number;
  pushesRefused: number;
  unsubscribed: number;
  expired: number;
}

const MAX_FORM_BYTES = 16 * 1024;
const CALLBACK_TIMEOUT_MS = 5_000;

export class WebSubHub {
  readonly url: string;
  readonly stats: HubStats = {
    requests: 0,
    refused: 0,
    verified: 0,
    verificationsFailed: 0,
    pushes: 0,
    pushesRefused: 0,
    unsubscribed: 0,
    expired: 0,
  };
  readonly #o: WebSubHubOptions;
  /** By topic + callback, as the recommendation keys subscriptions. */
  readonly #subs = new Map<string, Held>();
  readonly #inFlight = new Set<Promise<unknown>>();
  #fault: HubFault | null = null;
  #stopped = new AbortController();

  constructor(options: WebSubHubOptions) {
    this.#o = options;
    this.url = options.url;
  }

  /** The Link header a feed served at `topic` carries. */
  linkHeader(topic: string): string {
    return `<${this.url}>; rel="hub", <${topic}>; rel="self"`;
  }

  /** Push with a bad signature (`bad-signature`), with none (`no-signature`), or rightly (null). */
  fault(kind: HubFault | null): void {
    this.#fault = kind;
  }

  subscriptions(): HubSubscription[] {
    return [...this.#subs.values()].map(
      ({ secret: _s, sentChange: _c, sentHash: _h, ...listed }) => ({
        ...listed,
      }),
    );
  }

  /** Resolves once every verification and push started so far has finished. */
  async settled(): Promise<void> {
    while (this.#inFlight.size > 0) await Promise.allSettled([...this.#inFlight]);
  }

  stop(): void {
    this.#stopped.abort();
  }

  /** POST /hub: a (un)subscription request, form-encoded (§5.1). 202, then verification. */
  async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    this.stats.requests++;
    if (req.method !== "POST") return this.#answer(res, 405, "POST a subscription request\n");
    const form = await readForm(req);
    if (!form) return this.#answer(res, 400, "a form-encoded body of at most 16 KiB\n");
    const mode = form.get("hub.mode");
    const topic = form.get("hub.topic") ?? "";
    const callback = form.get("hub.callback") ?? "";
    if (mode !== "subscribe" && mode !== "unsubscribe") {
      return this.#answer(res, 400, "hub.mode must be subscribe or unsubscribe\n");
    }
    if (!isHttpUrl(callback))
      return this.#answer(res, 400, "hub.callback must be an http(s) URL\n");
    if (!this.#o.topic(topic)) return this.#answer(res, 404, `no topic ${topic} here\n`);
    const secret = form.get("hub.secret");
    if (secret !== null && (secret.length === 0 || Buffer.byteLength(secret) >= 200)) {
      return this.#answer(res, 400, "hub.secret must be 1 to 199 bytes\n");
    }
    const asked = Number(form.get("hub.lease_seconds"));
    const lease = Math.min(
      this.#o.maxLeaseSeconds ?? 10 * 86_400,
      Number.isInteger(asked) && asked > 0 ? asked : (this.#o.defaultLeaseSeconds ?? 3600),
    );
    this.#answer(res, 202, "");
    this.#track(this.#verify(mode, topic, callback, lease, secret));
  }

  /** Drops leases that ran out and pushes every topic whose feed changed since its last push. */
  check(): void {
    const now = this.#o.now();
    for (const [key, sub] of this.#subs) {
      if (sub.expiresAt <= now) {
        this.#subs.delete(key);
        this.stats.expired++;
        continue;
      }
      const topic = this.#o.topic(sub.topic);
      if (!topic) continue;
      // lastChanged has whole milliseconds: a change in the same millisecond as the last look
      // would hide behind `<`, so an equal time is rendered and compared by the body's hash.
      const changed = topic.lastChanged();
      if (changed < sub.sentChange) continue;
      const feed = topic.render();
      const hash = hashOf(feed.body);
      sub.sentChange = changed;
      if (hash === sub.sentHash) continue;
      sub.sentHash = hash;
      this.#track(this.#push(sub, feed));
    }
  }

  async #verify(
    mode: "subscribe" | "unsubscribe",
    topic: string,
    callback: string,
    lease: number,
    secret: string | null,
  ): Promise<void> {
    const challenge = randomBytes(16).toString("hex");
    const target = new URL(callback);
    target.searchParams.set("hub.mode", mode);
    target.searchParams.set("hub.topic", topic);
    target.searchParams.set("hub.challenge", challenge);
    if (mode === "subscribe") target.searchParams.set("hub.lease_seconds", String(lease));
    let confirmed = false;
    try {
      const res = await fetch(target, { signal: this.#signal() });
      confirmed = res.status >= 200 && res.status < 300 && (await res.text()) === challenge;
    } catch {
      confirmed = false;
    }
    if (!confirmed) {
      this.stats.verificationsFailed++;
      return;
    }
    this.stats.verified++;
    const key = `${topic} ${callback}`;
    if (mode === "unsubscribe") {
      if (this.#subs.delete(key)) this.stats.unsubscribed++;
      return;
    }
    const known = this.#subs.get(key);
    const held: Held = {
      topic,
      callback,
      leaseSeconds: lease,
      expiresAt: this.#o.now() + lease * 1000,
      secret,
      lastPushStatus: known?.lastPushStatus ?? null,
      pushes: known?.pushes ?? 0,
      // A renewal keeps its place; a new subscriber gets what changes from now on.
      sentChange: known?.sentChange ?? this.#o.topic(topic)?.lastChanged() ?? 0,
      sentHash: known ? known.sentHash : hashOf(this.#o.topic(topic)?.render().body ?? ""),
    };
    this.#subs.set(key, held);
  }

  async #push(sub: Held, { body, contentType }: { body: string; contentType: string }) {
    const headers: Record<string, string> = {
      "content-type": contentType,
      link: this.linkHeader(sub.topic),
    };
    if (sub.secret && this.#fault !== "no-signature") {
      const key = this.#fault === "bad-signature" ? `${sub.secret}-wrong` : sub.secret;
      headers["x-hub-signature"] = `sha256=${createHmac("sha256", key).update(body).digest("hex")}`;
    }
    this.stats.pushes++;
    sub.pushes++;
    try {
      const res = await fetch(sub.callback, {
        method: "POST",
        headers,
        body,
        signal: this.#signal(),
      });
      await res.arrayBuffer().catch(() => {});
      sub.lastPushStatus = res.status;
      if (res.status < 200 || res.status >= 300) this.stats.pushesRefused++;
    } catch {
      sub.lastPushStatus = 0;
      this.stats.pushesRefused++;
    }
  }

  #signal(): AbortSignal {
    return AbortSignal.any([this.#stopped.signal, AbortSignal.timeout(CALLBACK_TIMEOUT_MS)]);
  }

  #track(work: Promise<unknown>): void {
    this.#inFlight.add(work);
    void work.finally(() => this.#inFlight.delete(work));
  }

  #answer(res: ServerResponse, status: number, text: string): void {
    if (status >= 400) this.stats.refused++;
    res.writeHead(status, {
      "content-type": "text/plain; charset=utf-8",
      "content-length": Buffer.byteLength(text),
    });
    res.end(text);
  }
}

async function readForm(req: IncomingMessage): Promise<URLSearchParams | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_FORM_BYTES) return null;
    chunks.push(chunk as Buffer);
  }
  return new URLSearchParams(Buffer.concat(chunks).toString("utf8"));
}

function hashOf(body: string): string {
  return createHash("sha256").update(body).digest("hex");
}

function isHttpUrl(value: string): boolean {
  try {
    const u = new URL(value);
    return u.protocol === "http:" || u.protocol === "https:";
  } catch {
    return false;
  }
}
