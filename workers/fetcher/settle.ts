import type { Clock } from "@/lib/backoff";
import type { BreakerConfig } from "@/lib/breaker";
import type { Database } from "@/lib/db";
import type { Attempt } from "./attempt";
import { type Admission, admit } from "./breaker/admit";
import { releaseProbe } from "./breaker/releaseProbe";
import type { FetchCode } from "./classify";
import { type HttpResponse, httpGet, systemResolver } from "./httpGet";
import { sharedOutageWatch } from "./outage";
import { sharedRateBudget } from "./rateBudget";
import { recordAttempt } from "./recordAttempt";
import { loadSourceState, type SourceFetchState } from "./sourceState";
import type { Fetched, FetcherDeps, FetchSourceOptions, FetchTarget, PendingPoll } from "./types";
import { recordVerdict } from "./verdict";

export function fetcherDeps(options: FetchSourceOptions): FetcherDeps {
  return {
    now: Date.now,
    random: Math.random,
    sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
    resolver: systemResolver,
    rateBudget: sharedRateBudget(),
    outage: sharedOutageWatch(),
    ...options.deps,
  };
}

/** The deps as lib/backoff's clock, for the retries within a request. */
export function clockOf(deps: FetcherDeps): Clock {
  return { now: deps.now, random: deps.random, sleep: (ms) => deps.sleep(ms) };
}

/** The guarded GET bound to this source's SSRF settings, its limits and the hosts' rate budget. */
export function guardedGet(source: FetchTarget, options: FetchSourceOptions, deps: FetcherDeps) {
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

/** A request that never went out (disabled source, open breaker): no row, no verdict. */
export function skippedRequest(
  source: FetchTarget,
  code: FetchCode,
  message: string,
  durationMs: number,
): PendingPoll {
  const fetched: Fetched = {
    code,
    finalUrl: source.url,
    notModified: false,
    bytes: 0,
    durationMs,
    attempts: 0,
    conditional: false,
    message: `fetcher: ${message}`,
  };
  return {
    fetched,
    settle: async () => ({ ...fetched, outage: false }),
    abandon: async () => {},
  };
}

const HOUR_MS = 3_600_000;

/**
 * May this request go out? The source's state (its row created on the first request), then the
 * breaker: `refused` is the request that never went (disabled source, open breaker: no row, no
 * verdict), otherwise the admission (a half-open probe carries its token to the verdict).
 */
export async function admitRequest(
  db: Database,
  source: FetchTarget,
  breaker: BreakerConfig,
  options: FetchSourceOptions,
  durationMs: () => number,
): Promise<{ refused: PendingPoll } | { state: SourceFetchState; admission: Admission }> {
  const state = await loadSourceState(db, source.id, options.honestyIntervalMs ?? HOUR_MS);
  const disabled = () =>
    skippedRequest(source, "disabled", `source ${source.id} is disabled`, durationMs());
  if (state.disabled) return { refused: disabled() };
  const admission = await admit(db, source.id, breaker);
  if (admission.admitted) return { state, admission };
  if (admission.disabled) return { refused: disabled() };
  return {
    refused: skippedRequest(
      source,
      "breaker_open",
      `breaker for ${source.id} is ${admission.state}`,
      durationMs(),
    ),
  };
}

/** How one attempt is written to fetch_attempts (and counted by fetch:finished). */
export interface AttemptRow {
  retry: number;
  ms: number;
  conditional: boolean;
  /** A 200's validators and body hash: stored only for the source's own URL, once it was read. */
  full?: { etag: string | null; lastModified: string | null; sha256: string };
}

export function attemptRecorder(db: Database, source: FetchTarget, collector: string) {
  return (a: Attempt, row: AttemptRow) =>
    recordAttempt(db, {
      sourceId: source.id,
      collector,
      code: a.code,
      status: a.res?.status,
      bytes: a.res?.body.length ?? 0,
      durationMs: row.ms,
      conditional: row.conditional,
      retry: row.retry,
      message: a.message,
      full: row.full,
      unconditional200: row.full !== undefined && !row.conditional,
    });
}

export interface Unsettled {
  source: FetchTarget;
  collector: string;
  breaker: BreakerConfig;
  deps: FetcherDeps;
  probeToken?: string;
  fetched: Fetched;
  /** The last attempt as the transport saw it. */
  last: Attempt;
  /** Its row when it was a 200 (written at settle, once the body is judged); null otherwise. */
  row: AttemptRow | null;
  /** Requests of this request's attempts that failed in a way the breaker counts. */
  failedRequests: number;
}

/**
 * The settle handle every kind of request shares. A 200 that the caller could not read is the
 * source failing: recorded as `parse_error`, one more failed request for the breaker, and without
 * its validators, or the next poll's 304 would count that same broken body as a success.
 */
export function settleable(db: Database, u: Unsettled): PendingPoll {
  const record = attemptRecorder(db, u.source, u.collector);
  let done = false;
  const once = () => {
    if (done) throw new Error(`fetcher: the request of ${u.source.id} was already settled`);
    done = true;
  };
  return {
    fetched: u.fetched,
    settle: async (unreadable) => {
      once();
      const judged: Attempt =
        u.row && unreadable !== undefined
          ? { ...u.last, code: "parse_error", message: unreadable.slice(0, 2_000) }
          : u.last;
      if (u.row) await record(judged, judged === u.last ? u.row : { ...u.row, full: undefined });
      const verdict = await recordVerdict(
        db,
        u.source.id,
        requestHost(u.fetched.finalUrl),
        judged,
        u.breaker,
        u.deps.outage,
        u.probeToken,
        judged === u.last ? u.failedRequests : u.failedRequests + 1,
      );
      return judged === u.last
        ? { ...u.fetched, ...verdict }
        : {
            ...u.fetched,
            code: judged.code,
            body: undefined,
            message: judged.message,
            ...verdict,
          };
    },
    abandon: async () => {
      once();
      if (u.row) await record(u.last, u.row);
      if (u.probeToken) await releaseProbe(db, u.source.id, u.probeToken);
    },
  };
}

/** The host a request ended at, for the outage watch. */
function requestHost(url: string): string | null {
  try {
    return new URL(url).host;
  } catch {
    return null;
  }
}
