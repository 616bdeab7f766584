/**
 * Stable codes and states shared by the pipeline (workers/) and what reads its tables (the
 * dashboard, metrics, the API): they are stored in rows and used as metric labels, so both sides
 * must agree on one list. Codes never change meaning; new ones are only added.
 */

/**
 * Fetch outcomes (workers/fetcher/classify.ts) (stored on fetch_attempts and source_state, shown on the
 * dashboard, used as metric labels). Codes never change meaning; new ones are only added.
 *
 * Beyond the usual list:
 * - `connect`: the TCP connection was refused or the host/network was unreachable (the server
 *   answered "no", or nobody is routing to it), as opposed to `timeout` (nobody answered at all).
 * - `redirect`: more than the allowed redirect hops, or a redirect without a usable Location.
 * - `protocol`: the peer spoke broken HTTP or sent a corrupt compressed body.
 * - `breaker_open`, `disabled`: no request was made; the source's breaker is open (or its probe
 *   is out) or the source was disabled after a 404/410.
 * - `parse_error`: a 200 whose body the caller could not read (not a feed, not a page): never
 *   produced by the transport, only when the caller settles the poll (index.ts PendingPoll).
 */
export const FETCH_CODES = [
  "ok",
  "not_modified",
  "http_4xx",
  "http_404",
  "http_410",
  "http_429",
  "http_5xx",
  "timeout",
  "dns",
  "tls",
  "reset",
  "connect",
  "too_large",
  "redirect",
  "protocol",
  "parse_error",
  "blocked_robots",
  "blocked_ssrf",
  "breaker_open",
  "disabled",
] as const;

export type FetchCode = (typeof FETCH_CODES)[number];

/**
 * Where an observation came from. `fallback` is the page observer (title and link only) and may
 * create a row but never modify one; the others are authoritative. `backfill` is history read
 * after a reconnect and never wakes downstream.
 */
export const ORIGINS = ["primary", "poll", "backfill", "fallback"] as const;
export type Origin = (typeof ORIGINS)[number];

/** What the writer did with a delivery (news_events.result, workers/store). */
export const RESULTS = [
  "inserted",
  "upgraded",
  "unchanged",
  "updated",
  "tombstoned",
  "rejected",
] as const;
export type WriteResult = (typeof RESULTS)[number];

/**
 * Why a story webhook delivery was refused (workers/stories/receiveWebhook.ts): a bounded set
 * (metric label, dashboard, story_webhook_rejections.reason).
 */
export const REJECT_REASONS = [
  "missing_headers",
  "bad_timestamp",
  "stale_timestamp",
  "future_timestamp",
  "bad_signature",
  "no_secret",
  "too_large",
  "malformed_event",
  "unknown_source",
] as const;
export type RejectReason = (typeof REJECT_REASONS)[number];

/** What a queue worker's row reads as: its own word, or `lost` once its reports have stopped. */
export const WORKER_STATES = ["running", "draining", "stopped", "lost"] as const;
export type WorkerState = (typeof WORKER_STATES)[number];

/**
 * A WebSub subscription's states (websub_subscriptions.state, workers/websub; the migration says
 * what each means): the metric's label and the dashboard's words.
 */
export const WEBSUB_STATES = [
  "no_hub",
  "pending",
  "active",
  "denied",
  "failed",
  "unsubscribing",
  "unsubscribed",
] as const;
export type WebSubState = (typeof WEBSUB_STATES)[number];
