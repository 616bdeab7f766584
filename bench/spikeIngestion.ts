/**
 * The ingestion half of seed 003's spike ("block one source and check"): while readers pour in,
 * one simulator source is blackholed and another answers 503; afterwards, did the other sources
 * keep polling on schedule, and did the two breakers open at their threshold (5 failed requests,
 * retries included, decided once per poll: lib/breaker.ts, docs/decisions/012)?
 *
 * Everything is read over HTTP from the app's Sources API (the dashboard's own view of
 * source_state and fetch_attempts) and driven through the simulator's control API.
 */
import { DEFAULT_BREAKER } from "@/lib/breaker";
import { expectedActivitySeconds } from "@/lib/health";
import { MIN_POLL_SECONDS } from "@/lib/schedule/nextPoll";

/**
 * Two feeds, so the breaker decides on the poll schedule (every 30 s, within 30 s when failing),
 * never the wire stream (the line's first sight of a story) or the aggregator. A blackhole
 * answers nothing: each of a poll's 3 attempts waits out the 15 s headers timeout; a 503 is
 * answered at once and retried within 1.5 s.
 */
export const BLACKHOLED = "ledger-rss";
export const ANSWERS_503 = "harbour-atom";
/**
 * A poll is on time when it starts within the source's interval (at least MIN_POLL_SECONDS)
 * plus the schedule's +10 % jitter plus this: the time a due job may wait for a queue worker
 * and the previous poll's own duration on a machine the spike saturates. 10 s is a third of a
 * feed's 30 s interval: a source that slipped by more missed a cycle.
 */
export const SLACK_SECONDS = 10;
/** Decision 012 promises a dead source's breaker opens within 3 minutes; 20 s to observe it. */
const OPEN_DEADLINE_MS = 200_000;
const WATCH_EVERY_MS = 3_000;
const OK_CODES = new Set(["ok", "not_modified"]);

interface Attempt {
  startedAt: string;
  code: string;
  retry: number;
  collector: string;
}

export interface SourceDetail {
  id: string;
  kind: string;
  pollIntervalSeconds: number;
  breaker: { state: string; since: string | null; failures: number; threshold: number };
  collectors: { collector: string; lastActivityAt: string | null; connected: boolean }[];
  recentAttempts: Attempt[];
}

export interface FaultedReport {
  sourceId: string;
  fault: "blackhole" | "503";
  opened: boolean;
  openedAfterSeconds: number | null;
  /** Failed requests (retries included) from the fault to the opening, and the polls they made. */
  failedRequests: number;
  polls: number;
  /** Requests made in the cool-down after it opened: 0 expected. */
  requestsWhileOpen: number;
  codes: Record<string, number>;
  /**
   * Opened at the poll whose failures reached the threshold: failedRequests ≥ threshold and
   * fewer than threshold before that poll; within the 3 minutes decision 012 promises.
   */
  met: boolean;
}

export interface OtherReport {
  sourceId: string;
  kind: string;
  /** Polled kinds: poll starts in the window, the longest gap and the allowed one. */
  polls: number | null;
  failedPolls: number | null;
  maxGapSeconds: number;
  allowedGapSeconds: number;
  met: boolean;
}

export interface IngestionReport {
  injectedAt: string;
  checkedAt: string;
  simulatorRatePerMinute: number | null;
  threshold: number;
  slackSeconds: number;
  faulted: FaultedReport[];
  others: OtherReport[];
  met: boolean;
  /** Why a part could not be checked (the Sources API refused, a source is unknown …). */
  problems: string[];
}

async function control(simUrl: string, method: string, path: string, body?: unknown) {
  const res = await fetch(`${simUrl}/_control/${path}`, {
    method,
    headers: body === undefined ? {} : { "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(5_000),
  });
  if (!res.ok) throw new Error(`simulator ${method} ${path}: ${res.status} ${await res.text()}`);
  return (await res.json()) as unknown;
}

/** Original stories a minute across the simulator's outlets (copies add ~85 % again). */
export async function setSimulatorRate(simUrl: string, perMinute: number): Promise<number> {
  const answer = (await control(simUrl, "POST", "rate", { perMinute })) as { perMinute: number };
  return answer.perMinute;
}

export async function clearFaults(simUrl: string): Promise<void> {
  await control(simUrl, "DELETE", "faults");
}

async function detail(origin: string, id: string): Promise<SourceDetail> {
  const res = await fetch(`${origin}/api/sources/${encodeURIComponent(id)}?limit=500`, {
    signal: AbortSignal.timeout(30_000),
  });
  if (!res.ok) throw new Error(`GET /api/sources/${id}: ${res.status}`);
  return ((await res.json()) as { source: SourceDetail }).source;
}

/**
 * Injects both faults now and watches the two breakers (one Sources API request each every 3 s:
 * nothing next to the spike's 400 a second) until both opened or 200 s passed. `finish()` waits
 * for that, then judges every source.
 */
export async function blockSources(
  origin: string,
  simUrl: string,
  simulatorRatePerMinute: number | null,
): Promise<{ finish(): Promise<IngestionReport> }> {
  await control(simUrl, "POST", `faults/${BLACKHOLED}`, { kind: "blackhole" });
  await control(simUrl, "POST", `faults/${ANSWERS_503}`, { kind: "503" });
  const injectedAt = Date.now();
  const faults = { [BLACKHOLED]: "blackhole", [ANSWERS_503]: "503" } as const;
  const openedAt = new Map<string, number>();
  const problems: string[] = [];
  const watching = (async () => {
    while (Date.now() - injectedAt < OPEN_DEADLINE_MS && openedAt.size < 2) {
      for (const id of Object.keys(faults)) {
        if (openedAt.has(id)) continue;
        const s = await detail(origin, id).catch((err: Error) => {
          if (!problems.includes(err.message)) problems.push(err.message);
          return null;
        });
        // Open, or half-open after its cool-down: either way it opened; `since` is when (a
        // half-open probe keeps the opening's time, decision 012).
        if (s && s.breaker.state !== "closed" && s.breaker.since) {
          openedAt.set(id, Date.parse(s.breaker.since));
        }
      }
      await new Promise((r) => setTimeout(r, WATCH_EVERY_MS));
    }
  })();

  return {
    async finish() {
      await watching;
      const checkedAt = Date.now();
      const faulted: FaultedReport[] = [];
      for (const [id, fault] of Object.entries(faults)) {
        const s = await detail(origin, id).catch(() => null);
        faulted.push(judgeFaulted(id, fault, s, injectedAt, openedAt.get(id) ?? null));
      }
      const others: OtherReport[] = [];
      const listed = await fetch(`${origin}/api/sources`, { signal: AbortSignal.timeout(30_000) })
        .then(async (r) => (r.ok ? ((await r.json()) as { sources: { id: string }[] }) : null))
        .catch(() => null);
      if (!listed) problems.push("GET /api/sources failed: the other sources were not checked");
      for (const { id } of listed?.sources ?? []) {
        if (id in faults) continue;
        const s = await detail(origin, id).catch(() => null);
        if (!s) {
          problems.push(`GET /api/sources/${id} failed`);
          continue;
        }
        others.push(judgeOther(s, injectedAt, checkedAt));
      }
      return {
        injectedAt: new Date(injectedAt).toISOString(),
        checkedAt: new Date(checkedAt).toISOString(),
        simulatorRatePerMinute,
        threshold: DEFAULT_BREAKER.threshold,
        slackSeconds: SLACK_SECONDS,
        faulted,
        others,
        met: faulted.every((f) => f.met) && others.length > 0 && others.every((o) => o.met),
        problems,
      };
    },
  };
}

/** Exported for the test: the breaker's verdict from the attempts the Sources API lists. */
export function judgeFaulted(
  sourceId: string,
  fault: "blackhole" | "503",
  s: SourceDetail | null,
  injectedAt: number,
  openedAt: number | null,
): FaultedReport {
  const attempts = (s?.recentAttempts ?? [])
    .map((a) => ({ ...a, t: Date.parse(a.startedAt) }))
    .filter((a) => a.t >= injectedAt)
    .sort((a, b) => a.t - b.t);
  const before = openedAt === null ? attempts : attempts.filter((a) => a.t <= openedAt);
  const failed = before.filter((a) => !OK_CODES.has(a.code));
  const polls = before.filter((a) => a.retry === 0).length;
  const lastPollStart = before.filter((a) => a.retry === 0).at(-1)?.t ?? Number.NaN;
  const inLastPoll = failed.filter((a) => a.t >= lastPollStart).length;
  const codes: Record<string, number> = {};
  for (const a of failed) codes[a.code] = (codes[a.code] ?? 0) + 1;
  const coolDownEnd = (openedAt ?? 0) + DEFAULT_BREAKER.coolDownMs;
  const requestsWhileOpen =
    openedAt === null ? 0 : attempts.filter((a) => a.t > openedAt && a.t < coolDownEnd).length;
  const threshold = DEFAULT_BREAKER.threshold;
  const openedAfterSeconds = openedAt === null ? null : (openedAt - injectedAt) / 1000;
  return {
    sourceId,
    fault,
    opened: openedAt !== null,
    openedAfterSeconds,
    failedRequests: failed.length,
    polls,
    requestsWhileOpen,
    codes,
    met:
      openedAt !== null &&
      failed.length === before.length &&
      failed.length >= threshold &&
      failed.length - inLastPoll < threshold &&
      requestsWhileOpen === 0 &&
      (openedAfterSeconds ?? Number.POSITIVE_INFINITY) <= 180,
  };
}

/** Exported for the test: did this source keep its cycle from the faults to the check? */
export function judgeOther(s: SourceDetail, from: number, to: number): OtherReport {
  if (s.kind === "feed" || s.kind === "page") {
    const attempts = s.recentAttempts
      .map((a) => ({ ...a, t: Date.parse(a.startedAt) }))
      .filter((a) => a.t >= from && a.t <= to)
      .sort((a, b) => a.t - b.t);
    const starts = attempts.filter((a) => a.retry === 0).map((a) => a.t);
    // A poll's outcome is its last attempt's: a retry that succeeded is a poll that finished.
    const failedPolls = starts.filter((t, k) => {
      const end = starts[k + 1] ?? Number.POSITIVE_INFINITY;
      const last = attempts.filter((a) => a.t >= t && a.t < end).at(-1);
      return last !== undefined && !OK_CODES.has(last.code);
    }).length;
    const edges = [from, ...starts, to];
    let maxGap = 0;
    for (let k = 1; k < edges.length; k++) {
      maxGap = Math.max(maxGap, ((edges[k] as number) - (edges[k - 1] as number)) / 1000);
    }
    const allowed = Math.max(s.pollIntervalSeconds, MIN_POLL_SECONDS) * 1.1 + SLACK_SECONDS;
    return {
      sourceId: s.id,
      kind: s.kind,
      polls: starts.length,
      failedPolls,
      maxGapSeconds: maxGap,
      allowedGapSeconds: allowed,
      met: maxGap <= allowed && failedPolls === 0,
    };
  }
  // A stream or a story API: alive when each collector heard from it within its activity
  // interval (a stream's keepalive, a catch-up's poll) plus the slack, at the check.
  const allowed = expectedActivitySeconds(s.kind, s.pollIntervalSeconds) + SLACK_SECONDS;
  const ages = s.collectors.map((c) =>
    c.lastActivityAt ? (to - Date.parse(c.lastActivityAt)) / 1000 : Number.POSITIVE_INFINITY,
  );
  const maxGap = ages.length > 0 ? Math.max(...ages) : Number.POSITIVE_INFINITY;
  return {
    sourceId: s.id,
    kind: s.kind,
    polls: null,
    failedPolls: null,
    maxGapSeconds: maxGap,
    allowedGapSeconds: allowed,
    met: maxGap <= allowed,
  };
}
