import { createHash } from "node:crypto";
import type { JobError } from "./types";

const MAX_MESSAGE = 4_000;
const MAX_STACK = 16_000;
/** As much as a stack: a failure is kept on every attempt (job_failures) and on the dead letter. */
const MAX_DETAIL = 16_000;

/**
 * Anything thrown, as a JobError: code (err.code, else the error's name), message, stack, and the
 * error's `detail` when it has one that JSON can hold (past MAX_DETAIL characters, its JSON text
 * cut, marked `truncated`).
 */
export function toJobError(err: unknown, host?: string): JobError {
  const e = err as {
    code?: unknown;
    name?: unknown;
    message?: unknown;
    stack?: unknown;
    host?: unknown;
    detail?: unknown;
  };
  const isObject = typeof err === "object" && err !== null;
  const code =
    isObject && (typeof e.code === "string" || typeof e.code === "number")
      ? String(e.code)
      : isObject && typeof e.name === "string"
        ? e.name
        : "Error";
  const message = isObject && typeof e.message === "string" ? e.message : String(err);
  const errHost = isObject && typeof e.host === "string" ? e.host : undefined;
  const detail = isObject ? boundedDetail(e.detail) : undefined;
  return {
    code: code.slice(0, 200),
    message: message.slice(0, MAX_MESSAGE),
    stack: isObject && typeof e.stack === "string" ? e.stack.slice(0, MAX_STACK) : undefined,
    host: host ?? errHost,
    ...(detail === undefined ? {} : { detail }),
  };
}

function boundedDetail(detail: unknown): unknown {
  if (detail === undefined || detail === null) return undefined;
  let text: string | undefined;
  try {
    text = JSON.stringify(detail);
  } catch {
    return undefined; // a cycle, a BigInt: nothing JSON can keep
  }
  if (text === undefined) return undefined;
  return text.length <= MAX_DETAIL ? detail : { truncated: true, json: text.slice(0, MAX_DETAIL) };
}

/**
 * Masks what differs between occurrences of one fault: ids, hashes, numbers, quoted values. So
 * "timeout after 3012 ms fetching item 8f3a…" and "timeout after 2987 ms fetching item 1c2d…"
 * group together.
 */
export function maskMessage(message: string): string {
  return message
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi, "<id>")
    .replace(/\b(?=[0-9a-f]*\d)[0-9a-f]{8,}\b/gi, "<hex>")
    .replace(/"[^"]*"|'[^']*'/g, "<str>")
    .replace(/\d+(\.\d+)?/g, "#")
    .replace(/\s+/g, " ")
    .trim()
    .slice(0, 500);
}

/**
 * Groups dead letters by cause: stage + error code + host + message with numbers and ids
 * masked. Short (16 hex digits) so people can type it into a filter.
 */
export function fingerprint(stage: string, error: JobError): string {
  const parts = [stage, error.code, error.host ?? "", maskMessage(error.message)];
  // sweep.ts computes the same in SQL for expired leases: keep the two in step.
  return createHash("sha256").update(parts.join("|")).digest("hex").slice(0, 16);
}

/** The host of a URL-ish payload field, for fingerprints; undefined when there is none. */
export function urlHost(url: unknown): string | undefined {
  if (typeof url !== "string") return undefined;
  try {
    return new URL(url).host || undefined;
  } catch {
    return undefined;
  }
}
