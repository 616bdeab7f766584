import { on } from "@/lib/events";
import type { OwnMetrics } from "./definitions";
import { countReadRequest, noteReadStore, READ_STORE_KINDS } from "./readPath";

/**
 * The own metrics fed by lib/events.ts: what this process did. Each subscriber is one counter
 * step (emit() runs them synchronously in the emitter's turn); labels are bounded by the
 * metric's guard (./definitions.ts). Returns the unsubscribe.
 */
export function subscribeMetrics(m: OwnMetrics): () => void {
  const offs = [
    on("observation:written", (e) => m.observations.inc(e)),
    on("fetch:finished", (e) => {
      m.fetches.inc(e);
      if (Number.isFinite(e.durationSeconds) && e.durationSeconds >= 0) {
        m.fetchDuration.observe(e, e.durationSeconds);
      }
      if (e.bytes > 0) m.fetchBytes.inc(e, e.bytes);
    }),
    on("page:looked", (e) => {
      if (Number.isFinite(e.cpuSeconds) && e.cpuSeconds >= 0) {
        m.pageLookCpu.observe({ mode: e.mode }, e.cpuSeconds);
      }
      if (e.blocked > 0) m.browserRequestsRefused.inc(e, e.blocked);
    }),
    on("feed:capped", (e) => m.entriesLeftOut.inc(e, Math.max(0, e.count))),
    on("buffer:waited", (e) => m.waits.inc(e)),
    on("buffer:dropped", (e) => m.dropped.inc(e, Math.max(0, e.count))),
    // One event per claim statement; only claims that took over an expired lease count here.
    on("job:claimed", (e) => {
      if (e.reclaimed > 0) m.reclaimed.inc({ stage: e.queue }, e.reclaimed);
    }),
    // A queue's processed / failed / dead-lettered counts and its handlers' time start at 0
    // when a worker starts claiming from it: increase() misses the first step of a series that
    // appears at 1, and an alert on the first dead letter must see it.
    on("queue:started", (e) => {
      for (const stage of e.queues) {
        for (const outcome of ["completed", "failed", "dead"])
          m.queueJobs.inc({ stage, outcome }, 0);
        for (const outcome of ["completed", "failed"]) m.queueJobDuration.zero({ stage, outcome });
      }
    }),
    on("job:completed", (e) => {
      m.queueJobs.inc({ stage: e.queue, outcome: "completed" });
      jobDuration(m, e.queue, "completed", e.durationMs);
    }),
    on("job:failed", (e) => {
      m.queueJobs.inc({ stage: e.queue, outcome: "failed" });
      jobDuration(m, e.queue, "failed", e.durationMs);
    }),
    on("job:dead", (e) => m.queueJobs.inc({ stage: e.queue, outcome: "dead" })),
    on("job:expired", (e) => {
      m.queueJobs.inc({ stage: e.queue, outcome: "expired" }, Math.max(0, e.count));
      // The sweeper parks jobs out of attempts in the same statement; they emit no job:dead.
      if (e.parked > 0) m.queueJobs.inc({ stage: e.queue, outcome: "dead" }, e.parked);
    }),
    on("job:released", (e) =>
      m.queueJobs.inc({ stage: e.queue, outcome: "released" }, Math.max(0, e.count)),
    ),
    on("job:lost", (e) => m.queueJobs.inc({ stage: e.queue, outcome: "lost" })),
    on("breaker:opened", () => m.breakerTransitions.inc({ to: "open" })),
    on("breaker:closed", () => m.breakerTransitions.inc({ to: "closed" })),
    on("breaker:disabled", () => m.breakerTransitions.inc({ to: "disabled" })),
    on("stream:connected", (e) => m.streamConnections.inc(e)),
    on("stream:disconnected", (e) => m.streamDisconnects.inc(e)),
    on("stream:events", (e) => m.streamEvents.inc(e, Math.max(0, e.count))),
    on("story:webhook", (e) => {
      // A delivery naming no source still counts: under "unknown", like its rejection row ('').
      const source = e.source || "unknown";
      m.storyWebhooks.inc({ ...e, source, reason: e.reason || "none" });
      if (e.lagSeconds !== null && Number.isFinite(e.lagSeconds)) {
        // A publication stamped slightly ahead of our clock is a lag of 0, not a negative one.
        m.storyLag.observe({ source }, Math.max(0, e.lagSeconds));
      }
    }),
    on("dedup:decided", (e) => {
      m.dedupDecisions.inc({ stage: e.stage ?? "none", outcome: e.outcome });
      if (Number.isFinite(e.ms) && e.ms >= 0) {
        m.dedupDecisionSeconds.observe({ outcome: e.outcome }, e.ms / 1000);
      }
    }),
    on("embed:done", (e) => m.embeddings.inc({ model: e.model, outcome: "stored" }, e.items)),
    on("embed:failed", (e) => m.embeddings.inc({ model: e.model, outcome: "failed" }, e.items)),
    on("provider:call", (e) => {
      const labels = { purpose: e.purpose, provider: e.provider, model: e.model };
      m.providerCalls.inc({ ...labels, outcome: e.outcome || (e.ok ? "ok" : "error") });
      if (e.costUsd > 0) m.providerCost.inc(labels, e.costUsd);
      if (e.inputTokens > 0) m.providerTokens.inc(labels, e.inputTokens);
      if (e.outputTokens > 0) m.providerOutputTokens.inc(labels, e.outputTokens);
      if (e.correction) m.providerCorrections.inc(labels);
    }),
    on("extract:done", (e) => {
      const labels = { provider: e.provider ?? "none", model: e.model ?? "none" };
      m.extractions.inc({ ...labels, outcome: e.ok ? "ok" : "failed" });
      if (e.ok && e.fellOver) m.extractFallovers.inc(labels);
    }),
    on("extract:budget", (e) => m.extractBudgetReached.inc(e)),
    on("search:done", (e) =>
      m.searchSeconds.observe(
        { mode: e.model === null ? "fulltext" : "hybrid", backend: e.backend },
        e.seconds,
      ),
    ),
    on("readmodel:built", (e) => {
      m.readModelBuilds.inc({ outcome: "built" });
      if (Number.isFinite(e.seconds) && e.seconds >= 0)
        m.readModelBuildSeconds.observe({}, e.seconds);
      // One observation per changed story (a build of 10,000 changes: ~10,000 observe() calls,
      // a few ms once per build interval). A fetch stamped ahead of our clock is a lag of 0.
      for (const lag of e.lagSeconds) {
        if (Number.isFinite(lag)) m.readModelLag.observe({}, Math.max(0, lag));
      }
    }),
    on("readmodel:failed", () => m.readModelBuilds.inc({ outcome: "failed" })),
    on("readmodel:request", (e) => {
      m.readRequests.inc(e);
      if (Number.isFinite(e.seconds) && e.seconds >= 0) m.readRequestSeconds.observe(e, e.seconds);
      countReadRequest(e.outcome, e.seconds);
    }),
    on("readmodel:store", (e) => {
      if (!(READ_STORE_KINDS as readonly string[]).includes(e.kind)) return;
      for (const kind of READ_STORE_KINDS) m.readModelStore.set({ kind }, kind === e.kind ? 1 : 0);
      m.readModelStoreFallback.set(e.fallback ? 1 : 0);
      noteReadStore(e.kind, e.fallback, e.error);
    }),
    on("story:notification", (e) =>
      m.storyNotifications.inc({ ...e, source: e.source || "unknown" }),
    ),
    on("websub:push", (e) => {
      m.websubPushes.inc(e);
      if (e.storeSeconds !== null && Number.isFinite(e.storeSeconds) && e.storeSeconds >= 0) {
        m.websubStoreSeconds.observe({}, e.storeSeconds);
      }
    }),
    on("websub:verification", (e) => m.websubVerifications.inc(e)),
    on("websub:renewal", (e) => m.websubRenewals.inc(e)),
  ];
  return () => {
    for (const off of offs) off();
  };
}

function jobDuration(m: OwnMetrics, stage: string, outcome: string, ms: number): void {
  // A clock stepped back while the job ran is no duration; nor is a missing one.
  if (Number.isFinite(ms) && ms >= 0) m.queueJobDuration.observe({ stage, outcome }, ms / 1000);
}
