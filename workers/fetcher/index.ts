import { DEFAULT_BREAKER } from "@/lib/breaker";
import type { Database } from "@/lib/db";
import { type Attempt, attemptGet, fullFetch, header, validatorHeaders } from "./attempt";
import { countsAgainstBreaker } from "./classify";
import { checkHonesty } from "./honesty";
import { DEFAULT_FETCH_RETRY, type FetchRetryPolicy, retryRequest } from "./retry";
import { DEFAULT_ROBOTS, robotsRefusal } from "./robots";
import {
  type AttemptRow,
  admitRequest,
  attemptRecorder,
  clockOf,
  fetcherDeps,
  guardedGet,
  settleable,
} from "./settle";
import type { SourceFetchState } from "./sourceState";
import type {
  Fetched,
  FetcherDeps,
  FetchResult,
  FetchSourceOptions,
  FetchTarget,
  PendingPoll,
} from "./types";

export {
  BrowserUnavailableError,
  type Rendered,
  type RenderLimits,
  renderPage,
  sharedBrowserPool,
} from "./browser";
export { browserAnswers } from "./browserRequests";
export type { FetchCode } from "./classify";
export { currentOutage } from "./outage";
export { openStream } from "./stream";
export type {
  Fetched,
  FetcherDeps,
  FetchResult,
  FetchSourceOptions,
  FetchTarget,
  PendingPoll,
  PendingStream,
} from "./types";

const FEED_ACCEPT =
  "application/rss+xml, application/atom+xml, application/rdf+xml, application/feed+json, application/xml;q=0.9, text/xml;q=0.8, application/json;q=0.5, */*;q=0.1";

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
  const deps = fetcherDeps(options);
  const breaker = { ...DEFAULT_BREAKER, ...options.breaker };
  const started = deps.now();
  const admitted = await admitRequest(db, source, breaker, options, () => deps.now() - started);
  if ("refused" in admitted) return admitted.refused;
  const { state, admission } = admitted;

  const get = guardedGet(source, options, deps);
  const record = attemptRecorder(db, source, collector);
  const conditional = options.validators !== false && sendsValidators(state);
  const accept = { accept: options.accept ?? FEED_ACCEPT };
  const robots =
    options.robots === false
      ? null
      : await robotsRefusal(
          db,
          source.url,
          (url, maxBytes) => get(url, { accept: "text/plain, */*;q=0.5" }, maxBytes),
          { ...DEFAULT_ROBOTS, ...options.robots },
        );
  if (robots) {
    await record(robots, { retry: 0, ms: deps.now() - started, conditional: false });
    return settleable(db, {
      source,
      collector,
      breaker,
      deps,
      probeToken: admission.probeToken,
      fetched: fetchedOf(source, robots, 0, conditional, deps.now() - started),
      last: robots,
      row: null,
      failedRequests: 0,
    });
  }

  const headers = conditional ? { ...accept, ...validatorHeaders(state) } : accept;
  // A probe is one request: retrying it would send several while the breaker promises one.
  const policy = {
    ...DEFAULT_FETCH_RETRY,
    ...options.retry,
    ...(admission.probe ? { attempts: 1 } : {}),
  };
  const sent = await sendWithRetries(get, record, source.url, headers, policy, deps, {
    conditional,
    keepsValidators: true,
  });
  let caught = false;
  if (sent.last.code === "ok" && !conditional && options.validators !== false && sent.last.res) {
    const oldValidators = { ...accept, ...validatorHeaders(state) };
    caught = await checkHonesty(db, source.id, state, sent.last.res.body, () =>
      get(source.url, oldValidators).then(
        (r) => r.status,
        () => 0,
      ),
    );
  }
  const fetched = fetchedOf(source, sent.last, sent.attempts, conditional, deps.now() - started);
  if (caught) fetched.caughtLyingValidators = true;
  return settleable(db, {
    source,
    collector,
    breaker,
    deps,
    probeToken: admission.probeToken,
    fetched,
    ...sent,
  });
}

/**
 * One request for another URL of a source the caller is already talking to (a stream's history
 * after its connect was admitted and judged): the rate budget, the guarded GET, retries, its
 * fetch_attempts rows and fetch:finished events, and its verdict at settle like a poll's, so its
 * failed requests count against the source's breaker. No admission (the connect had it), no
 * validators and no robots.txt (the stream's own endpoint, with the stream's permission).
 */
export async function beginRequest(
  db: Database,
  source: FetchTarget,
  collector: string,
  url: string,
  options: FetchSourceOptions = {},
): Promise<PendingPoll> {
  const deps = fetcherDeps(options);
  const started = deps.now();
  const policy = { ...DEFAULT_FETCH_RETRY, ...options.retry };
  const headers = { accept: options.accept ?? "*/*" };
  const sent = await sendWithRetries(
    guardedGet(source, options, deps),
    attemptRecorder(db, source, collector),
    url,
    headers,
    policy,
    deps,
    { conditional: false, keepsValidators: false },
  );
  return settleable(db, {
    source,
    collector,
    breaker: { ...DEFAULT_BREAKER, ...options.breaker },
    deps,
    fetched: fetchedOf({ ...source, url }, sent.last, sent.attempts, false, deps.now() - started),
    ...sent,
  });
}

/**
 * The attempts of one request: each failed one written at once, a 200's row kept for settle
 * (a 200 is never retried, so it is the last), and each failed request the breaker counts
 * counted, so the retries inside a poll bring the breaker nearer instead of stretching it.
 */
async function sendWithRetries(
  get: ReturnType<typeof guardedGet>,
  record: ReturnType<typeof attemptRecorder>,
  url: string,
  headers: Record<string, string>,
  policy: FetchRetryPolicy,
  deps: FetcherDeps,
  how: { conditional: boolean; keepsValidators: boolean },
): Promise<{ last: Attempt; attempts: number; failedRequests: number; row: AttemptRow | null }> {
  let attempts = 0;
  let failedRequests = 0;
  let row: AttemptRow | null = null;
  const last = await retryRequest(
    async (retry) => {
      attempts++;
      const t0 = deps.now();
      const attempt = await attemptGet(() => get(url, headers), t0);
      const done: AttemptRow = { retry, ms: deps.now() - t0, conditional: how.conditional };
      if (attempt.code === "ok")
        row = how.keepsValidators ? { ...done, full: fullFetch(attempt) } : done;
      else await record(attempt, done);
      if (countsAgainstBreaker(attempt.code)) failedRequests++;
      return attempt;
    },
    policy,
    clockOf(deps),
  );
  return { last, attempts, failedRequests, row };
}

function fetchedOf(
  source: FetchTarget,
  last: Attempt,
  attempts: number,
  conditional: boolean,
  durationMs: number,
): Fetched {
  const res = last.res;
  return {
    code: last.code,
    status: res?.status,
    body: last.code === "ok" ? res?.body : undefined,
    contentType: res ? (header(res, "content-type") ?? undefined) : undefined,
    finalUrl: res?.finalUrl ?? source.url,
    notModified: last.code === "not_modified",
    bytes: res?.body.length ?? 0,
    durationMs,
    permanentRedirect: res?.permanentRedirect,
    attempts,
    conditional,
    message: last.message,
    ...pacing(last),
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

/** What the source said about when to come back: Retry-After, Cache-Control. */
function pacing(final: Attempt): { retryAfterSeconds?: number; cacheControl?: string } {
  const out: { retryAfterSeconds?: number; cacheControl?: string } = {};
  if (final.retryAfterMs !== undefined)
    out.retryAfterSeconds = Math.ceil(final.retryAfterMs / 1000);
  const cacheControl = final.res ? header(final.res, "cache-control") : null;
  if (cacheControl) out.cacheControl = cacheControl;
  return out;
}
