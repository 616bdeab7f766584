import { createHash } from "node:crypto";
import { classifyError, classifyStatus, type FetchCode, isSuccess } from "./classify";
import type { HttpResponse } from "./httpGet";
import { parseRetryAfter } from "./retry";
import type { SourceFetchState } from "./sourceState";

/** One attempt's outcome: a code always, the response when one arrived. */
export interface Attempt {
  code: FetchCode;
  retryAfterMs?: number;
  res?: HttpResponse;
  message?: string;
}

/** Runs one guarded GET and turns whatever happens into an Attempt; never throws. */
export async function attemptGet(
  run: () => Promise<HttpResponse>,
  nowMs: number,
): Promise<Attempt> {
  try {
    const res = await run();
    const code = classifyStatus(res.status);
    const retryAfterMs = parseRetryAfter(header(res, "retry-after") ?? undefined, nowMs);
    const message = isSuccess(code)
      ? undefined
      : `fetcher: HTTP ${res.status} from ${res.finalUrl}`;
    return { code, res, retryAfterMs, message };
  } catch (err) {
    return { code: classifyError(err), message: (err as Error).message };
  }
}

/** A 200's validators and body hash, as stored for the next conditional request. */
export function fullFetch(attempt: Attempt) {
  if (attempt.code !== "ok" || !attempt.res) return undefined;
  return {
    etag: header(attempt.res, "etag"),
    lastModified: header(attempt.res, "last-modified"),
    sha256: sha256(attempt.res.body),
  };
}

export function validatorHeaders(state: SourceFetchState): Record<string, string> {
  const h: Record<string, string> = {};
  if (state.etag) h["if-none-match"] = state.etag;
  if (state.lastModified) h["if-modified-since"] = state.lastModified;
  return h;
}

export function header(res: HttpResponse, name: string): string | null {
  const value = res.headers[name];
  return (Array.isArray(value) ? value[0] : value) ?? null;
}

export function sha256(body: Buffer): string {
  return createHash("sha256").update(body).digest("hex");
}
