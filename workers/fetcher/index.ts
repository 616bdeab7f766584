import { createHash } from "node:crypto";
import type { Database } from "@/lib/db";
import { admit } from "./breaker/admit";
import { type BreakerConfig, type BreakerState, DEFAULT_BREAKER } from "./breaker/config";
import { disableSource } from "./breaker/disableSource";
import { recordFailure } from "./breaker/recordFailure";
import { recordSuccess } from "./breaker/recordSuccess";
import { releaseProbe } from "./breaker/releaseProbe";
import {
  classifyError,
  classifyStatus,
  countsAgainstBreaker,
  type FetchCode,
  FetchError,
  isSuccess,
} from "./classify";
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
import {
  DEFAULT_RETRY,
  parseRetryAfter,
  type RetryPolicy,
  realRetryDeps,
  withRetry,
} from "./retry";
import { DEFAULT_ROBOTS, type RobotsPolicy, robotsAllows } from "./robots";
import { distrustValidators, loadSourceState, type SourceFetchState } from "./sourceState";

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

export interface FetchResult {
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
  /** Attempts that went out (0 when the breaker, a disabled source or robots stopped it). */
  attempts: number;
  conditional: boolean;
  message?: string;
  /** The breaker after this poll's verdict; opened when this poll opened it (for events/metrics). */
  breaker?: { state: BreakerState; opened: boolean };
  /** No breaker verdict was taken because a local network outage is declared. */
  outage: boolean;
}

const FEED_ACCEPT =
  "application/rss+xml, application/atom+xml, application/rdf+xml, application/xml;q=0.9, text/xml;q=0.8, */*;q=0.1";
const HOUR_MS = 3_600_000;

interface Attempt {
  code: FetchCode;
  retryAfterMs?: number;
  res?: HttpResponse;
  message?: string;
}

/**
 * The polite pipeline a collector calls for one poll of one source, top to bottom:
 * breaker admit → robots.txt → rate budget (per hop) → conditional GET (or the honesty check's
 * unconditional one) → retries (429/5xx/timeout, full jitter; none for a half-open probe) →
 * one fetch_attempts row per attempt → outage check → breaker verdict (or disable on 404/410).
 * Never throws for the source's faults; those are codes. Database errors do throw.
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
  const state = await loadSourceState(db, source.id, options.honestyIntervalMs ?? HOUR_MS);
  const skipped = (code: FetchCode, message: string): FetchResult => ({
    code,
    finalUrl: source.url,
    notModified: false,
    bytes: 0,
    durationMs: deps.now() - started,
    attempts: 0,
    conditional: false,
    message,
    outage: false,
  });
  if (state.disabled) return skipped("disabled", `fetcher: source ${source.id} is disabled`);
  const admission = await admit(db, source.id, breaker);
  if (!admission.admitted) {
    return admission.disabled
      ? skipped("disabled", `fetcher: source ${source.id} is disabled`)
      : skipped("breaker_open", `fetcher: breaker for ${source.id} is ${admission.state}`);
  }

  const get = (url: string, headers: Record<string, string>, maxBytes?: number) =>
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
  const record = (a: Attempt, retry: number, conditional: boolean, ms: number, extra = {}) =>
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
      ...extra,
    });

  const conditional =
    state.trustsValidators &&
    !state.honestyDue &&
    (state.etag !== null || state.lastModified !== null);
  const accept = { accept: options.accept ?? FEED_ACCEPT };
  const headers = conditional ? { ...accept, ...validatorHeaders(state) } : accept;
  let attempts = 0;
  let final: Attempt;

  const robotsRefusal = await checkRobots(db, source.url, options.robots, (url, maxBytes) =>
    get(url, { accept: "text/plain, */*;q=0.5" }, maxBytes),
  );
  if (robotsRefusal) {
    final = robotsRefusal;
    await record(final, 0, false, deps.now() - started);
    attempts = 1;
  } else {
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
        const attempt = await tryGet(() => get(source.url, headers), deps.now());
        const body = attempt.res?.body;
        const full =
          attempt.code === "ok" && body && attempt.res
            ? {
                etag: header(attempt.res, "etag"),
                lastModified: header(attempt.res, "last-modified"),
                sha256: sha256(body),
              }
            : undefined;
        await record(attempt, retry, conditional, deps.now() - t0, {
          full,
          unconditional200: full !== undefined && !conditional,
        });
        return attempt;
      },
      policy,
      deps,
    );
    if (final.code === "ok" && !conditional && final.res) {
      await checkHonesty(db, source.id, state, final.res.body, () =>
        get(source.url, { ...accept, ...validatorHeaders(state) }).then(
          (res) => res.status,
          () => 0,
        ),
      );
    }
  }

  const verdict = await judge(db, source, deps, breaker, admission.probeToken, final);
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
    ...verdict,
  };
}

async function tryGet(run: () => Promise<HttpResponse>, now: number): Promise<Attempt> {
  try {
    const res = await run();
    const code = classifyStatus(res.status);
    const retryAfterMs = parseRetryAfter(header(res, "retry-after") ?? undefined, now);
    const message = isSuccess(code)
      ? undefined
      : `fetcher: HTTP ${res.status} from ${res.finalUrl}`;
    return { code, res, retryAfterMs, message };
  } catch (err) {
    return { code: classifyError(err), message: (err as Error).message };
  }
}

/** robots.txt's verdict: null to go ahead, else the refusal as an attempt outcome. */
async function checkRobots(
  db: Database,
  url: string,
  policy: Partial<RobotsPolicy> | false | undefined,
  get: (url: string, maxBytes: number) => Promise<HttpResponse>,
): Promise<Attempt | null> {
  if (policy === false) return null;
  try {
    const allowed = await robotsAllows(db, new URL(url), get, { ...DEFAULT_ROBOTS, ...policy });
    if (allowed) return null;
    return { code: "blocked_robots", message: `fetcher: robots.txt disallows ${url}` };
  } catch (err) {
    if (err instanceof FetchError) return { code: err.code, message: err.message };
    if (err instanceof TypeError)
      return { code: "blocked_ssrf", message: `fetcher: not a valid URL: ${url}` };
    throw err;
  }
}

/**
 * The honesty check, on an unconditional 200: if the body differs from the one the stored
 * validators describe, ask once more with those old validators. A source that answers 304 to
 * them is claiming "unchanged" about a body we just saw change: its 304s cannot be trusted, and
 * it is fetched in full from then on. Precise, unlike comparing hashes alone (the body may have
 * changed honestly since the last 304), at the cost of one extra request only when both the
 * check is due and the body changed.
 */
async function checkHonesty(
  db: Database,
  sourceId: string,
  state: SourceFetchState,
  body: Buffer,
  askWithOldValidators: () => Promise<number>,
): Promise<void> {
  if (!state.trustsValidators || !state.bodySha256 || sha256(body) === state.bodySha256) return;
  if (state.etag === null && state.lastModified === null) return;
  if ((await askWithOldValidators()) === 304) await distrustValidators(db, sourceId);
}

/** The breaker's verdict on one poll, unless our own network is to blame. */
async function judge(
  db: Database,
  source: FetchTarget,
  deps: FetcherDeps,
  breaker: BreakerConfig,
  probeToken: string | undefined,
  final: Attempt,
): Promise<Pick<FetchResult, "breaker" | "outage">> {
  const host = safeHost(final.res?.finalUrl ?? source.url);
  if (host) await deps.outage.observe(db, host, final.code);
  if (isSuccess(final.code)) {
    const state = await recordSuccess(db, source.id);
    return { outage: false, breaker: state ? { state, opened: false } : undefined };
  }
  const outage = deps.outage.active();
  let verdict: FetchResult["breaker"];
  if (!outage && (final.code === "http_404" || final.code === "http_410")) {
    await disableSource(db, source.id, `${final.code}: ${final.message ?? ""}`.trim());
  } else if (!outage && countsAgainstBreaker(final.code)) {
    const failure = await recordFailure(db, source.id, breaker, probeToken);
    if (failure) verdict = { state: failure.state, opened: failure.opened };
  }
  if (probeToken && !verdict) await releaseProbe(db, source.id, probeToken);
  return { outage, breaker: verdict };
}

function validatorHeaders(state: SourceFetchState): Record<string, string> {
  const h: Record<string, string> = {};
  if (state.etag) h["if-none-match"] = state.etag;
  if (state.lastModified) h["if-modified-since"] = state.lastModified;
  return h;
}

function header(res: HttpResponse, name: string): string | null {
  const value = res.headers[name];
  return (Array.isArray(value) ? value[0] : value) ?? null;
}

function sha256(body: Buffer): string {
  return createHash("sha256").update(body).digest("hex");
}

function safeHost(url: string): string | null {
  try {
    return new URL(url).host;
  } catch {
    return null;
  }
}
