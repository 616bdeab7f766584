/**
 * Virtual time for the newsroom. Everything that happens (a story, an edit, a keepalive) is an
 * event at a simulated instant; `runUntil` plays events in time order. The server pumps it from
 * the wall clock, tests call `advance` instead, so no test waits for news in real time.
 */
interface Scheduled {
  at: number;
  seq: number;
  fn: () => void;
}

export class Scheduler {
  #now: number;
  #seq = 0;
  #queue: Scheduled[] = [];

  /**
   * `onError` hears about an event that threw; the rest still run. Inline in the Next.js server a
   * throw here would otherwise escape a timer and take the whole process down.
   */
  constructor(
    start: number,
    private readonly onError: (err: unknown) => void = (err) =>
      console.error("simulator: scheduled event failed:", err),
  ) {
    this.#now = start;
  }

  get now(): number {
    return this.#now;
  }

  /** Runs `fn` at simulated time `at` (at the next `runUntil` if that is already past). */
  at(at: number, fn: () => void): void {
    const entry = { at, seq: this.#seq++, fn };
    // Binary insert keeps the queue sorted by (at, seq): same-instant events keep their order.
    let lo = 0;
    let hi = this.#queue.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const m = this.#queue[mid] as Scheduled;
      if (m.at < at || (m.at === at && m.seq < entry.seq)) lo = mid + 1;
      else hi = mid;
    }
    this.#queue.splice(lo, 0, entry);
  }

  after(ms: number, fn: () => void): void {
    this.at(this.#now + ms, fn);
  }

  /** When the next event is due, or undefined when nothing is scheduled. */
  nextAt(): number | undefined {
    return this.#queue[0]?.at;
  }

  runUntil(t: number): void {
    for (let e = this.#queue[0]; e !== undefined && e.at <= t; e = this.#queue[0]) {
      this.#queue.shift();
      this.#now = Math.max(this.#now, e.at);
      try {
        e.fn();
      } catch (err) {
        this.onError(err);
      }
    }
    this.#now = Math.max(this.#now, t);
  }
}
