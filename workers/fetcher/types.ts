import type { IncomingMessage } from "node:http";
import type { BreakerConfig } from "@/lib/breaker";
import type { FetchCode } from "./classify";
import type { HttpLimits, Resolver } from "./httpGet";
import type { OutageWatch } from "./outage";
import type { RateBudget } from "./rateBudget";
import type { FetchRetryPolicy } from "./retry";
import type { RobotsPolicy } from "./robots";
import type { Verdict } from "./verdict";

export interface FetchTarget {
  id: string;
  url: string;
  allowPrivate: boolean;
}

/** What a fetch depends on, injectable for tests. */
export interface FetcherDeps {
  /** Milliseconds, for durations only; every stored time is the database's now(). */
  now: () => number;
  random: () => number;
  sleep: (ms: number) => Promise<void>;
  resolver: Resolver;
  rateBudget: RateBudget;
  outage: OutageWatch;
}

export interface FetchSourceOptions {
  deps?: Partial<FetcherDeps>;
  limits?: Partial<HttpLimits>;
  retry?: Partial<FetchRetryPolicy>;
  breaker?: Partial<BreakerConfig>;
  /** false skips robots.txt (only for sources that are ours, e.g. the simulator). */
  robots?: Partial<RobotsPolicy> | false;
  /**
   * How often a source with validators is fetched unconditionally anyway, to check that its 304s
   * are honest. 1 h: at a 60 s poll that is one full transfer in 60, cheap next to the cost of
   * silently missing every story a lying ETag hides.
   */
  honestyIntervalMs?: number;
  /** Host names that may resolve to private addresses (see HttpGetOptions.allowPrivateHosts). */
  allowPrivateHosts?: readonly string[];
  accept?: string;
  /**
   * false: never a conditional GET (and so no honesty check). For a page rendered in the browser,
   * whose headlines come from its scripts' requests: an unchanged HTML shell says nothing of them.
   */
  validators?: false;
}

/** What one request (a poll, a stream's connect, its history) fetched, before its verdict. */
export interface Fetched {
  code: FetchCode;
  status?: number;
  body?: Buffer;
  contentType?: string;
  finalUrl: string;
  notModified: boolean;
  /** Decompressed body bytes of the final attempt. */
  bytes: number;
  /** The whole poll: robots, rate-budget waits, retries and their delays. */
  durationMs: number;
  /** Every hop was 301/308 and validated: the caller may store this as the source's URL. */
  permanentRedirect?: string;
  /**
   * Requests for the source's URL, retries included: 0 when the breaker, a disabled source, or
   * robots.txt (its answer, or the failure to read it) stopped the poll first.
   */
  attempts: number;
  conditional: boolean;
  message?: string;
  /** The honesty check caught the source answering 304 for a changed body (this poll). */
  caughtLyingValidators?: boolean;
  /** The source's own pacing hints for the next poll: Retry-After, and its Cache-Control. */
  retryAfterSeconds?: number;
  cacheControl?: string;
}

/** A request with its verdict: `parse_error` when the caller could not read the 200's body. */
export interface FetchResult extends Fetched, Verdict {}

/**
 * A request whose attempts are done and recorded, except a 200's: whether that one was a success
 * depends on its body, which only the caller can read. `settle` writes its fetch_attempts row
 * with the final code (`ok`, or `parse_error` with the reader's message) and gives the breaker
 * the request's one verdict. Settle every request once; `abandon` is for a reader that threw:
 * the row is written as the transport saw it and a probe hands its slot back, with no verdict.
 */
export interface PendingPoll {
  fetched: Fetched;
  settle(unreadable?: string): Promise<FetchResult>;
  abandon(): Promise<void>;
}

/** A stream's connect: the open response when it answered 200 (the caller reads and closes it). */
export interface PendingStream extends PendingPoll {
  stream?: IncomingMessage;
}
