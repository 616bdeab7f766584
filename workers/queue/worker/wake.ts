import type { Clock } from "@/lib/backoff";

const WOKEN = "woken";

/**
 * Wakes a waiting loop: a NOTIFY, a freed slot, a claim coming back. A wake while the loop is
 * busy is kept, so the next wait returns at once instead of sleeping out its poll interval.
 */
export class Wake {
  private waiting: AbortController | undefined;
  private pending = false;
  private fresh = false;

  constructor(private readonly clock: Clock) {}

  /**
   * Called for every job let go (20k a second in a drain): one abort per wait at most, with a
   * reason of our own (abort() without one builds a DOMException, stack and all: 14 % of a
   * drain's CPU when it ran per job).
   */
  wake = (): void => {
    const waiting = this.waiting;
    if (!waiting) this.pending = true;
    else if (!waiting.signal.aborted) waiting.abort(WOKEN);
  };

  /** New jobs may be due (a NOTIFY, a sweep): wakes, and says so to takeNews(). */
  news = (): void => {
    this.fresh = true;
    this.wake();
  };

  /** News not yet taken. */
  get hasNews(): boolean {
    return this.fresh;
  }

  /** Whether news came since the last call. */
  takeNews(): boolean {
    const fresh = this.fresh;
    this.fresh = false;
    return fresh;
  }

  /** Until woken, `ms` have passed, or `stop` aborts. */
  async wait(ms: number, stop: AbortSignal): Promise<void> {
    if (this.pending || stop.aborted) {
      this.pending = false;
      return;
    }
    const waiting = new AbortController();
    const onStop = () => waiting.abort(WOKEN);
    stop.addEventListener("abort", onStop, { once: true });
    this.waiting = waiting;
    try {
      await this.clock.sleep(ms, waiting.signal);
    } finally {
      this.waiting = undefined;
      stop.removeEventListener("abort", onStop);
    }
  }
}
