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
 * browser path and the HTTP path counted together.
 */
export class RequestLog {
  readonly #entries: LoggedRequest[] = [];
  readonly #capacity: number;

  constructor(capacity = 10_000) {
    this.#capacity = capacity;
  }

  add(entry: LoggedRequest): void {
    this.#entries.push(entry);
    if (this.#entries.length > this.#capacity) this.#entries.shift();
  }

  /** Requests since `sinceMs` (epoch ms), optionally only those whose path starts with `prefix`. */
  list(options: { sinceMs?: number; pathPrefix?: string } = {}): LoggedRequest[] {
    return this.#entries.filter(
      (e) =>
        e.at >= (options.sinceMs ?? 0) &&
        (options.pathPrefix === undefined || e.path.startsWith(options.pathPrefix)),
    );
  }

  clear(): void {
    this.#entries.length = 0;
  }
}
