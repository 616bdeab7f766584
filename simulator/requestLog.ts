import { type HostRate, HostRates } from "./hostRates";

export type { HostRate } from "./hostRates";

/** One request as the simulator received it: what politeness checks read (who asked, when). */
export interface LoggedRequest {
  /** Wall-clock epoch ms of arrival (not simulated time: rate limits are about real time). */
  at: number;
  method: string;
  /** The Host header as sent: the host a client's per-host budget is keyed on. */
  host: string;
  path: string;
  userAgent: string;
}

/**
 * The last `capacity` requests, oldest first, so a test can check from the server's side what a
 * client promised: at most so many requests per host per second, robots.txt asked first, the
 * browser path and the HTTP path counted together. A ring, so a fleet of thousands of feeds
 * polled for hours costs the same as a minute of it; per-host rates (hostRates.ts) are counted
 * over every request, not only the ones still in the ring.
 */
export class RequestLog {
  readonly #entries: (LoggedRequest | undefined)[];
  readonly #capacity: number;
  /** Where the next entry goes; once the ring is full, also the oldest entry. */
  #next = 0;
  #size = 0;
  readonly rates: HostRates;

  constructor(capacity = 10_000, options: { maxHosts?: number } = {}) {
    if (!Number.isInteger(capacity) || capacity < 1) {
      throw new Error(`RequestLog capacity must be a whole number ≥ 1, not ${capacity}`);
    }
    this.#capacity = capacity;
    this.#entries = new Array(capacity);
    this.rates = new HostRates(options.maxHosts);
  }

  add(entry: LoggedRequest): void {
    this.#entries[this.#next] = entry;
    this.#next = (this.#next + 1) % this.#capacity;
    if (this.#size < this.#capacity) this.#size += 1;
    this.rates.record(entry.host, entry.at);
  }

  /** Requests since `sinceMs` (epoch ms), optionally only those whose path starts with `prefix`. */
  list(options: { sinceMs?: number; pathPrefix?: string } = {}): LoggedRequest[] {
    const out: LoggedRequest[] = [];
    const first = this.#size < this.#capacity ? 0 : this.#next;
    for (let n = 0; n < this.#size; n++) {
      const e = this.#entries[(first + n) % this.#capacity] as LoggedRequest;
      if (
        e.at >= (options.sinceMs ?? 0) &&
        (options.pathPrefix === undefined || e.path.startsWith(options.pathPrefix))
      ) {
        out.push(e);
      }
    }
    return out;
  }

  /** Per host: requests, and the most within any 1 s window (see HostRates). */
  hostRates(): HostRate[] {
    return this.rates.list();
  }

  get size(): number {
    return this.#size;
  }

  clear(): void {
    this.#entries.fill(undefined);
    this.#next = 0;
    this.#size = 0;
    this.rates.clear();
  }
}
