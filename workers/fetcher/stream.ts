import { DEFAULT_BREAKER } from "@/lib/breaker";
import type { Database } from "@/lib/db";
import type { Attempt } from "./attempt";
import { releaseProbe } from "./breaker/releaseProbe";
import { classifyError, classifyStatus, countsAgainstBreaker, FetchError } from "./classify";
import { connectStream } from "./connectStream";
import { DEFAULT_LIMITS, type HttpResponse } from "./httpGet";
import { resolveChecked } from "./resolveChecked";
import { admitRequest, attemptRecorder, fetcherDeps, settleable, skippedRequest } from "./settle";
import type { FetchSourceOptions, FetchTarget, PendingStream } from "./types";

export interface StreamConnectOptions extends FetchSourceOptions {
  /** Failed connects since the stream last stayed up: stored as the attempt's retry number. */
  reconnects?: number;
  /** Aborts the connect and, later, the open stream (the watcher is stopping). */
  signal?: AbortSignal;
}

/**
 * A stream's connect, as polite and as recorded as a poll: disabled? → breaker admit → the
 * host's rate budget → the SSRF guard (scheme, every resolved address checked, the socket pinned
 * to the checked one) → the request → its code from classify.ts like any poll's (a 404 is
 * `http_404`, a bad certificate `tls`) → one fetch_attempts row on the database clock and one
 * fetch:finished event. A 200's row waits for settle like a poll's: the caller judges whether the
 * answer is an event stream (`settle(message)` when it is not: `parse_error`). Not retried here:
 * the watcher's reconnect back-off is the retry. What happens after the connect (drops, idle
 * timeouts) is the watcher's to record (docs/decisions/020).
 */
export async function openStream(
  db: Database,
  source: FetchTarget,
  collector: string,
  options: StreamConnectOptions = {},
): Promise<PendingStream> {
  const deps = fetcherDeps(options);
  const breaker = { ...DEFAULT_BREAKER, ...options.breaker };
  const started = deps.now();
  const admitted = await admitRequest(db, source, breaker, options, () => deps.now() - started);
  if ("refused" in admitted) return admitted.refused;
  const { admission } = admitted;

  const limits = { ...DEFAULT_LIMITS, ...options.limits };
  let stream: PendingStream["stream"];
  let attempt: Attempt;
  let t0 = deps.now();
  try {
    const url = streamUrl(source.url);
    await deps.rateBudget.take(url.host);
    t0 = deps.now();
    const address = await resolveChecked(
      url,
      {
        allowPrivate: source.allowPrivate,
        allowPrivateHosts: options.allowPrivateHosts,
        resolver: deps.resolver,
      },
      limits.connectTimeoutMs,
    );
    const res = await connectStream(url, address, limits, options.signal);
    const code = classifyStatus(res.statusCode ?? 0);
    const response: HttpResponse = {
      status: res.statusCode ?? 0,
      headers: res.headers,
      body: Buffer.alloc(0),
      finalUrl: source.url,
      redirects: 0,
    };
    if (code === "ok") stream = res;
    else res.destroy();
    attempt = {
      code,
      res: response,
      message:
        code === "ok"
          ? undefined
          : `fetcher: stream ${url.host}${url.pathname} answered ${res.statusCode}`,
    };
  } catch (err) {
    attempt = { code: classifyError(err), message: (err as Error).message };
  }
  if (options.signal?.aborted) {
    // Stopped mid-connect: our doing, not the source's. No row, no verdict.
    stream?.destroy();
    if (admission.probeToken) await releaseProbe(db, source.id, admission.probeToken);
    return skippedRequest(
      source,
      "reset",
      "the watcher stopped while connecting",
      deps.now() - started,
    );
  }
  const row = {
    retry: Math.max(0, options.reconnects ?? 0),
    ms: deps.now() - t0,
    conditional: false,
  };
  if (attempt.code !== "ok") await attemptRecorder(db, source, collector)(attempt, row);
  const pending = settleable(db, {
    source,
    collector,
    breaker,
    deps,
    probeToken: admission.probeToken,
    fetched: {
      code: attempt.code,
      status: attempt.res?.status,
      contentType: contentTypeOf(attempt),
      finalUrl: source.url,
      notModified: false,
      bytes: 0,
      durationMs: deps.now() - started,
      attempts: 1,
      conditional: false,
      message: attempt.message,
    },
    last: attempt,
    row: attempt.code === "ok" ? row : null,
    failedRequests: countsAgainstBreaker(attempt.code) ? 1 : 0,
  });
  return { ...pending, stream };
}

function contentTypeOf(attempt: Attempt): string | undefined {
  const value = attempt.res?.headers["content-type"];
  return (Array.isArray(value) ? value[0] : value) ?? undefined;
}

/** http(s) only, as every poll's hop (httpGet's parseTarget). */
function streamUrl(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch (err) {
    throw new FetchError("blocked_ssrf", `not a valid URL: ${raw.slice(0, 200)}`, { cause: err });
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new FetchError("blocked_ssrf", `scheme ${url.protocol} is not http or https`);
  }
  return url;
}
