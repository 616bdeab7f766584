import type { Database } from "@/lib/db";
import { type Attempt, attemptGet, fullFetch, header, validatorHeaders } from "./attempt";
import { admit } from "./breaker/admit";
import { type BreakerConfig, DEFAULT_BREAKER } from "./breaker/config";
import type { FetchCode } from "./classify";
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

export interface FetchResult extends Verdict {
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

const FEED_ACCEPT =
  "application/rss+xml, application/atom+xml, application/rdf+xml, application/xml;q=0.9, text/xml;q=0.8, */*;q=0.1";
const HOUR_MS = 3_600_000;

/**
 * The polite pipeline a collector calls for one poll of one source, top to bottom:
 * breaker admit → robots.txt → rate budget (per hop, inside the guarded GET) → conditional GET,
 * or the honesty check's unconditional one → retries (429/5xx/timeout with full jitter; none for
 * a half-open probe) → one fetch_attempts row per attempt → outage watch → breaker verdict (or
 * disable on 404/410). The source's faults come back as codes; only database errors throw.
 */
export async function fetchSource(
  db: Database,
  source: FetchTarget,
  collector: string,
  options: FetchSourceOptions = {},
): Promise<FetchResult> {
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
  const skipped = (code: FetchCode, message: string): FetchResult => ({
    code,
    finalUrl: source.url,
    notModified: false,
    bytes: 0,
    durationMs: deps.now() - started,
    attempts: 0,
    conditional: false,
    message: `fetcher: ${message}`,
    outage: false,
  });

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
  let caught = false;
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
        await record(attempt, retry, conditional, deps.now() - t0);
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

  const host = hostOf(final.res?.finalUrl ?? source.url);
  const verdict = await recordVerdict(
    db,
    source.id,
    host,
    final,
    breaker,
    deps.outage,
    admission.probeToken,
  );
  const res = final.res;
  return {
    code: final.code,
    status: res?.status,
    body: final.code === "ok" ? res?.body : undefined,
    contentType: res ? (header(res, "content-type") ?? undefined) : undefined,
    finalUrl: res?.finalUrl ?? source.url,
    notModified: final.code === "not_modified",
    bytes: res?.body.length ?? 0,
    durationMs: deps.now() - started,
    permanentRedirect: res?.permanentRedirect,
    attempts,
    conditional,
    message: final.message,
    ...(caught ? { caughtLyingValidators: true } : {}),
    ...pacing(final),
    ...verdict,
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
