import type { Database } from "@/lib/db";
import { type Attempt, attemptGet, fullFetch, header, validatorHeaders } from "./attempt";
import { admit } from "./breaker/admit";
import { type BreakerConfig, DEFAULT_BREAKER } from "@/lib/breaker";
import { releaseProbe } from "./breaker/releaseProbe";
import { countsAgainstBreaker, type FetchCode } from "./classify";
import { checkHonesty } from "./honesty";
import {
  type HttpLimits,
  type HttpResponse,
  httpGet,
  type Resolver,
  systemResolver,
} from "./httpGet";
import { type OutageWatch, sharedOutageWatch } from "./outage";
import { type RateBudget, sharedRateBudget } from "./rateBudget";
import { recordAttempt } from "./recordAttempt";
import { DEFAULT_RETRY, type RetryPolicy, realRetryDeps, withRetry } from "./retry";
import { DEFAULT_ROBOTS, type RobotsPolicy, robotsRefusal } from "./robots";
import { loadSourceState, type SourceFetchState } from "./sourceState";
import { recordVerdict, type Verdict } from "./verdict";

export type { FetchCode } from "./classify";
export { currentOutage } from "./outage";

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
  retry?: Partial<RetryPolicy>;
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
}

/** What one poll fetched, before its verdict (see PendingPoll). */
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

/** A poll with its verdict: `parse_error` when the caller could not read the 200's body. */
export interface FetchResult extends Fetched, Verdict {}

/**
 * A poll whose requests are done and recorded, except a 200's: whether that one was a success
 * depends on its body, which only the caller can read. `settle` writes its fetch_attempts row
 * with the final code (`ok`, or `parse_error` with the reader's message) and gives the breaker
 * the poll's one verdict. Settle every poll once; `abandon` is for a reader that threw: the row is
 * written as the transport saw it and a probe hands its slot back, with no verdict either way.
 */
export interface PendingPoll {
  fetched: Fetched;
  settle(unreadable?: string): Promise<FetchResult>;
  abandon(): Promise<void>;
}

const FEED_ACCEPT =
  "application/rss+xml, application/atom+xml, application/rdf+xml, application/xml;q=0.9, text/xml;q=0.8, */*;q=0.1";
const HOUR_MS = 3_600_000;

/** One poll judged by its transport alone (a 200 is a success): for callers with no body to read. */
export async function fetchSource(
  db: Database,
  source: FetchTarget,
  collector: string,
  options: FetchSourceOptions = {},
): Promise<FetchResult> {
  return (await beginPoll(db, source, collector, options)).settle();
}

/**
 * The polite pipeline a collector calls for one poll of one source, top to bottom:
 * breaker admit → robots.txt → rate budget (per hop, inside the guarded GET) → conditional GET,
 * or the honesty check's unconditional one → retries (429/5xx/timeout with full jitter; none for
 * a half-open probe) → one fetch_attempts row per attempt (a 200's when it is settled) → the
 * caller reads the body → settle: outage watch → the breaker's one verdict for the poll (or
 * disable on 404/410). The source's faults come back as codes; only database errors throw.
 */
export async function beginPoll(
  db: Database,
  source: FetchTarget,
  collector: string,
  options: FetchSourceOptions = {},
): Promise<PendingPoll> {
  const deps: FetcherDeps = {
    now: Date.now,
    ...realRetryDeps,
    resolver: systemResolver,
    rateBudget: sharedRateBudget(),
    outage: sharedOutageWatch(),
    ...options.deps,
  };
  const breaker = { ...DEFAULT_BREAKER, ...options.breaker };
  const started = deps.now();
  const skipped = (code: FetchCode, message: string): PendingPoll => {
    const fetched: Fetched = {
      code,
      finalUrl: source.url,
      notModified: false,
      bytes: 0,
      durationMs: deps.now() - started,
      attempts: 0,
      conditional: false,
      message: `fetcher: ${message}`,
    };
    return {
      fetched,
      settle: async () => ({ ...fetched, outage: false }),
      abandon: async () => {},
    };
  };

  const state = await loadSourceState(db, source.id, options.honestyIntervalMs ?? HOUR_MS);
  if (state.disabled) return skipped("disabled", `source ${source.id} is disabled`);
  const admission = await admit(db, source.id, breaker);
  if (!admission.admitted) {
    return admission.disabled
      ? skipped("disabled", `source ${source.id} is disabled`)
      : skipped("breaker_open", `breaker for ${source.id} is ${admission.state}`);
  }

  const get = guardedGet(source, options, deps);
  const record = (
    a: Attempt,
    retry: number,
    conditional: boolean,
    ms: number,
    full = fullFetch(a),
  ) =>
    recordAttempt(db, {
      sourceId: source.id,
      collector,
      code: a.code,
      status: a.res?.status,
      bytes: a.res?.body.length ?? 0,
      durationMs: ms,
      conditional,
      retry,
      message: a.message,
      full,
      unconditional200: full !== undefined && !conditional,
    });

  const conditional = sendsValidators(state);
  const accept = { accept: options.accept ?? FEED_ACCEPT };
  let attempts = 0;
  // Requests of this poll that failed in a way the breaker counts: each is one failure, so the
  // retries inside a poll bring the breaker nearer instead of stretching its threshold.
  let failedRequests = 0;
  let caught = false;
  // The 200's row, written by settle (or abandon) once the body has been judged.
  let pending: { retry: number; ms: number } | null = null;
  let final: Attempt | null =
    options.robots === false
      ? null
      : await robotsRefusal(
          db,
          source.url,
          (url, maxBytes) => get(url, { accept: "text/plain, */*;q=0.5" }, maxBytes),
          {
            ...DEFAULT_ROBOTS,
            ...options.robots,
          },
        );
  if (final) {
    await record(final, 0, false, deps.now() - started);
  } else {
    const headers = conditional ? { ...accept, ...validatorHeaders(state) } : accept;
    // A probe is one request: retrying it would send several while the breaker promises one.
    const policy = {
      ...DEFAULT_RETRY,
      ...options.retry,
      ...(admission.probe ? { attempts: 1 } : {}),
    };
    final = await withRetry(
      async (retry) => {
        attempts++;
        const t0 = deps.now();
        const attempt = await attemptGet(() => get(source.url, headers), t0);
        // A 200 is never retried, so it is the poll's last attempt: its row waits for settle,
        // which knows whether the body was a feed.
        if (attempt.code === "ok") pending = { retry, ms: deps.now() - t0 };
        else await record(attempt, retry, conditional, deps.now() - t0);
        if (countsAgainstBreaker(attempt.code)) failedRequests++;
        return attempt;
      },
      policy,
      deps,
    );
    if (final.code === "ok" && !conditional && final.res) {
      const oldValidators = { ...accept, ...validatorHeaders(state) };
      caught = await checkHonesty(db, source.id, state, final.res.body, () =>
        get(source.url, oldValidators).then(
          (r) => r.status,
          () => 0,
        ),
      );
    }
  }

  const last: Attempt = final;
  const res = last.res;
  const fetched: Fetched = {
    code: last.code,
    status: res?.status,
    body: last.code === "ok" ? res?.body : undefined,
    contentType: res ? (header(res, "content-type") ?? undefined) : undefined,
    finalUrl: res?.finalUrl ?? source.url,
    notModified: last.code === "not_modified",
    bytes: res?.body.length ?? 0,
    durationMs: deps.now() - started,
    permanentRedirect: res?.permanentRedirect,
    attempts,
    conditional,
    message: last.message,
    ...(caught ? { caughtLyingValidators: true } : {}),
    ...pacing(last),
  };
  const row = pending as { retry: number; ms: number } | null;
  let done = false;
  const once = () => {
    if (done) throw new Error(`fetcher: the poll of ${source.id} was already settled`);
    done = true;
  };
  return {
    fetched,
    settle: async (unreadable) => {
      once();
      // A 200 that is not a feed is the source failing: recorded as such, and without its
      // validators (fullFetch keeps only an ok's), or the next poll's 304 would count that same
      // broken body as a success.
      const judged: Attempt =
        row && unreadable !== undefined
          ? { ...last, code: "parse_error", message: unreadable.slice(0, 2_000) }
          : last;
      if (row) await record(judged, row.retry, conditional, row.ms);
      const host = hostOf(fetched.finalUrl);
      const verdict = await recordVerdict(
        db,
        source.id,
        host,
        judged,
        breaker,
        deps.outage,
        admission.probeToken,
        judged === last ? failedRequests : failedRequests + 1,
      );
      return judged === last
        ? { ...fetched, ...verdict }
        : { ...fetched, code: judged.code, body: undefined, message: judged.message, ...verdict };
    },
    abandon: async () => {
      once();
      if (row) await record(last, row.retry, conditional, row.ms);
      if (admission.probeToken) await releaseProbe(db, source.id, admission.probeToken);
    },
  };
}

/**
 * Send validators only when the source has some, has not been caught lying, and its periodic
 * unconditional fetch (the honesty check) is not due.
 */
function sendsValidators(state: SourceFetchState): boolean {
  const has = state.etag !== null || state.lastModified !== null;
  return has && state.trustsValidators && !state.honestyDue;
}

/** The guarded GET bound to this source's SSRF settings, its limits and the hosts' rate budget. */
function guardedGet(source: FetchTarget, options: FetchSourceOptions, deps: FetcherDeps) {
  return (url: string, headers: Record<string, string>, maxBytes?: number): Promise<HttpResponse> =>
    httpGet(url, {
      allowPrivate: source.allowPrivate,
      allowPrivateHosts: options.allowPrivateHosts,
      resolver: deps.resolver,
      headers,
      limits: maxBytes ? { ...options.limits, maxBytes } : options.limits,
      beforeHop: async (hop) => {
        await deps.rateBudget.take(hop.host);
      },
    });
}

function hostOf(url: string): string | null {
  try {
    return new URL(url).host;
  } catch {
    return null;
  }
}

/** What the source said about when to come back: Retry-After, Cache-Control. */
function pacing(final: Attempt): { retryAfterSeconds?: number; cacheControl?: string } {
  const out: { retryAfterSeconds?: number; cacheControl?: string } = {};
  if (final.retryAfterMs !== undefined)
    out.retryAfterSeconds = Math.ceil(final.retryAfterMs / 1000);
  const cacheControl = final.res ? header(final.res, "cache-control") : null;
  if (cacheControl) out.cacheControl = cacheControl;
  return out;
}
