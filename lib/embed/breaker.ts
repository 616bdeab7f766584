import type { Clock } from "../backoff";
import type { BreakerConfig, BreakerState } from "../breaker";

/**
 * A supplier's circuit breaker, in memory (lib/breaker.ts's settings and states; the sources'
 * breaker keeps its state in the database because several workers poll one source, while an
 * embedder's calls all come from its own process).
 *
 * `threshold` failed requests in a row (timeouts, refused connections, 5xx, 429) open it; open,
 * it refuses every request for `coolDownMs`, then lets one probe through (half open): the probe's
 * answer closes it, its failure opens it again. Any answer counts as the supplier being up, a 400
 * or a malformed body too: those are loud errors of their own, and opening the breaker on them
 * would turn a misconfiguration into a quiet fallback.
 */
export class CallBreaker {
  private failures = 0;
  private openedAt: number | null = null;
  private probing = false;

  constructor(
    private readonly config: Pick<BreakerConfig, "threshold" | "coolDownMs">,
    private readonly clock: Pick<Clock, "now"> = { now: Date.now },
  ) {}

  get state(): BreakerState {
    if (this.openedAt === null) return "closed";
    return this.clock.now() - this.openedAt >= this.config.coolDownMs ? "half_open" : "open";
  }

  /** When an open breaker lets its next probe go (epoch ms); null when closed. */
  get reopensAt(): number | null {
    return this.openedAt === null ? null : this.openedAt + this.config.coolDownMs;
  }

  /** Whether a request may go now; in half open, only the one probe. */
  allow(): boolean {
    const state = this.state;
    if (state === "closed") return true;
    if (state === "open" || this.probing) return false;
    this.probing = true;
    return true;
  }

  /** The supplier answered (any status but 5xx, 408 and 429). */
  answered(): void {
    this.failures = 0;
    this.openedAt = null;
    this.probing = false;
  }

  /** A request allowed but never sent (its caller gave up): the probe slot is free again. */
  cancel(): void {
    this.probing = false;
  }

  /** The request failed: no answer, 5xx, 408 or 429. */
  failed(): void {
    this.failures++;
    if (this.probing || this.failures >= this.config.threshold) {
      this.openedAt = this.clock.now();
    }
    this.probing = false;
  }
}
