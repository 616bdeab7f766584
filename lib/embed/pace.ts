import type { Clock } from "../backoff";

/**
 * When the next request to a supplier may go: at most `requestsPerMinute`, evenly spaced (a
 * limit told by the supplier, or set to stay inside a plan), and never before a Retry-After the
 * supplier gave, for every caller of this embedder at once, since a 429 is about the key, not
 * the one call that met it.
 */
export class RequestPacer {
  private nextSlot = 0;
  private heldUntil = 0;
  private readonly spacingMs: number;

  constructor(
    requestsPerMinute: number | undefined,
    private readonly clock: Pick<Clock, "now" | "sleep">,
  ) {
    this.spacingMs = requestsPerMinute ? 60_000 / requestsPerMinute : 0;
  }

  /** Waits for this request's turn, reserving it; returns how long it waited. */
  async turn(signal?: AbortSignal): Promise<number> {
    const now = this.clock.now();
    const at = Math.max(now, this.nextSlot, this.heldUntil);
    this.nextSlot = at + this.spacingMs;
    const wait = at - now;
    if (wait > 0) await this.clock.sleep(wait, signal);
    return wait;
  }

  /** Nothing goes before `epochMs`. */
  holdUntil(epochMs: number): void {
    this.heldUntil = Math.max(this.heldUntil, epochMs);
  }
}
