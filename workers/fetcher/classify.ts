import type { FetchCode } from "@/lib/codes";

/** Fetch outcomes classified into the stable codes (lib/codes.ts FETCH_CODES says what each means). */
export type { FetchCode };

/** An error with its stage ("fetcher: …") and its stable code. */
export class FetchError extends Error {
  readonly code: FetchCode;
  readonly status?: number;
  constructor(code: FetchCode, message: string, options?: { status?: number; cause?: unknown }) {
    super(message.startsWith("fetcher:") ? message : `fetcher: ${message}`, {
      cause: options?.cause,
    });
    this.name = "FetchError";
    this.code = code;
    this.status = options?.status;
  }
}

/** The code for an HTTP status that reached us (redirects are followed before this). */
export function classifyStatus(status: number): FetchCode {
  if (status >= 200 && status < 300) return "ok";
  if (status === 304) return "not_modified";
  if (status === 404) return "http_404";
  if (status === 410) return "http_410";
  if (status === 429) return "http_429";
  if (status >= 500) return "http_5xx";
  if (status >= 300 && status < 400) return "redirect";
  return "http_4xx";
}

const DNS_ERRORS = new Set([
  "ENOTFOUND",
  "EAI_AGAIN",
  "EAI_FAIL",
  "ENODATA",
  "ESERVFAIL",
  "EAI_NODATA",
  "ENONAME",
]);
const CONNECT_ERRORS = new Set(["ECONNREFUSED", "EHOSTUNREACH", "ENETUNREACH", "EADDRNOTAVAIL"]);
const RESET_ERRORS = new Set(["ECONNRESET", "EPIPE", "ECONNABORTED", "UND_ERR_SOCKET"]);
const TLS_PREFIXES = ["ERR_TLS_", "ERR_SSL_", "CERT_", "UNABLE_TO_", "DEPTH_ZERO_", "SELF_SIGNED_"];

/** The code for anything thrown while fetching. */
export function classifyError(err: unknown): FetchCode {
  if (err instanceof FetchError) return err.code;
  const code = String((err as NodeJS.ErrnoException)?.code ?? "");
  if (code === "ETIMEDOUT" || code === "ABORT_ERR") return "timeout";
  if (DNS_ERRORS.has(code)) return "dns";
  if (CONNECT_ERRORS.has(code)) return "connect";
  if (RESET_ERRORS.has(code)) return "reset";
  if (TLS_PREFIXES.some((p) => code.startsWith(p))) return "tls";
  if (code.startsWith("HPE_") || code.startsWith("Z_")) return "protocol";
  if (/socket hang up/i.test(String((err as Error)?.message))) return "reset";
  return "reset";
}

/** Worth another try within this poll: the source may answer differently in a moment. */
export function isRetryable(code: FetchCode): boolean {
  return code === "http_429" || code === "http_5xx" || code === "timeout";
}

export function isSuccess(code: FetchCode): boolean {
  return code === "ok" || code === "not_modified";
}

/**
 * Counts toward the source's breaker. Not: successes; 404/410 (they disable the source instead);
 * robots and SSRF refusals (our policy, not the source's health); skipped fetches. A parse error
 * does count: a source that answers 200 with something that is not a feed is not working.
 */
export function countsAgainstBreaker(code: FetchCode): boolean {
  return !(
    isSuccess(code) ||
    code === "http_404" ||
    code === "http_410" ||
    code === "blocked_robots" ||
    code === "blocked_ssrf" ||
    code === "breaker_open" ||
    code === "disabled"
  );
}

/** Failures that say more about our own network than about the source (see outage.ts). */
export function isNetworkFailure(code: FetchCode): boolean {
  return code === "dns" || code === "connect" || code === "reset";
}
