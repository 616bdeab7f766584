import type { ExtractAttempt, ExtractionFailedError } from "@/lib/extract/types";
import { PermanentJobError } from "@/workers/queue/queueWorker";

/** One refused attempt as the dead letter keeps it. */
export interface FailedAttempt {
  provider: string;
  model: string;
  promptVersion: string;
  outcome: string;
  correction: boolean;
  status: number | null;
  error: string | null;
  /** What the provider answered, cut to its share of the detail's bound. */
  rawText: string | null;
  tokensIn: number;
  tokensOut: number;
  costUsd: number;
  latencyMs: number;
}

/** The job error's `detail` (workers/queue/jobError.ts keeps it on the failure and the dead letter). */
export interface ExtractFailureDetail {
  kind: "extract";
  attempts: FailedAttempt[];
}

/**
 * The whole detail stays under 12,000 characters of JSON, inside the queue's 16,000 (jobError.ts):
 * a chain of two providers with a correction retry each is 4 attempts, and 4 raw answers of 4 KiB
 * (the providers' own cut) would not fit with their errors; the raw texts share what is left.
 */
const DETAIL_BUDGET = 12_000;
const RAW_MAX = 4_096;
const ERROR_MAX = 500;

/** An error for a job with an extraction no provider could make, carrying what each attempt said. */
export type ExtractJobError = Error & { code: string; detail: ExtractFailureDetail };

/**
 * The queue's error for an ExtractionFailedError: a message that names each attempt by provider and
 * code only (so the fingerprint groups one fault, not one raw answer), the last attempt's code as
 * the error code (a stable one of EXTRACT_FAILURE_CODES), and the attempts with raw answers and
 * errors as `detail`. `permanent` (bad input) is a PermanentJobError: the job is parked at once.
 */
export function extractJobError(err: ExtractionFailedError): ExtractJobError {
  const attempts = err.attempts;
  const last = attempts.at(-1);
  const code = last && last.outcome !== "ok" ? last.outcome : "extract_failed";
  const said = attempts
    .map((a) => `${a.provider}${a.correction ? " (correction)" : ""} ${a.outcome}`)
    .join(", ");
  const message = `extract: no valid extraction: ${said || "no provider was tried"}`;
  const detail: ExtractFailureDetail = { kind: "extract", attempts: bounded(attempts) };
  const error = err.permanent ? new PermanentJobError(message, code) : new Error(message);
  return Object.assign(error, { code, detail });
}

function bounded(attempts: readonly ExtractAttempt[]): FailedAttempt[] {
  const rows = attempts.map(
    (a): FailedAttempt => ({
      provider: a.provider,
      model: a.model,
      promptVersion: a.promptVersion,
      outcome: a.outcome,
      correction: a.correction,
      status: a.status,
      error: a.error === null ? null : a.error.slice(0, ERROR_MAX),
      rawText: a.rawText === null ? null : a.rawText.slice(0, RAW_MAX),
      tokensIn: a.tokensIn,
      tokensOut: a.tokensOut,
      costUsd: a.costUsd,
      latencyMs: a.latencyMs,
    }),
  );
  const size = () => JSON.stringify(rows).length;
  if (size() <= DETAIL_BUDGET) return rows;
  const withRaw = rows.filter((r) => r.rawText !== null);
  const others = size() - withRaw.reduce((n, r) => n + JSON.stringify(r.rawText).length, 0);
  // JSON escapes can make a raw text longer than its characters: cut, measure, cut again.
  let share = Math.max(0, Math.floor((DETAIL_BUDGET - others) / Math.max(1, withRaw.length)));
  while (size() > DETAIL_BUDGET && share > 0) {
    for (const r of withRaw) {
      const raw = r.rawText as string;
      if (raw.length > share) r.rawText = `${raw.slice(0, Math.max(0, share - 1))}…`;
    }
    share = Math.floor(share / 2);
  }
  if (size() > DETAIL_BUDGET) for (const r of withRaw) r.rawText = "…";
  return rows;
}
