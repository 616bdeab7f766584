import type { Clock } from "@/lib/backoff";

/**
 * Wakes a waiting loop: a NOTIFY, a freed slot, a claim coming back. A wake while the loop is
 * busy is kept, so the next wait returns at once instead of sleeping out its poll interval.
 */
export class Wake {
  private waiting: AbortController | undefined;
  private pending = false;

  constructor(private readonly clock: Clock) {}

  wake = (): void => {
    if (this.waiting) this.waiting.abort();
    else this.pending = true;
  };

  /** Until woken, `ms` have passed, or `stop` aborts. */
  async wait(ms: number, stop: AbortSignal): Promise<void> {
    if (this.pending || stop.aborted) {
      this.pending = false;
      return;
    }
    const waiting = new AbortController();
    const onStop = () => waiting.abort();
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
