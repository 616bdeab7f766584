-- Queue depth over time: one row per queue and minute, written by the workers that serve the
-- queue (workers/queue/depthSample.ts). Depth was only ever the current count; a backlog that
-- built up and drained while nobody looked left no trace. 1,440 rows a day per queue, kept 7
-- days like queue_claim_stats (housekeeping.ts), so the dashboard's week is backed by samples.
CREATE TABLE "queue_depth_samples" (
    "queue" TEXT NOT NULL,
    -- date_trunc('minute', now()) of the sample, by the database clock. The first sample of a
    -- minute stays (INSERT … ON CONFLICT DO NOTHING): every worker process samples its queues.
    "minute" TIMESTAMPTZ(6) NOT NULL,
    -- Ready and due: the backlog waiting for a worker (a retry whose delay is over included).
    "due" INTEGER NOT NULL,
    -- Leased: a worker holds it.
    "running" INTEGER NOT NULL,
    -- Ready, failed before and due later: waiting out its retry delay.
    "retrying" INTEGER NOT NULL,
    -- Dead-lettered (state 'dead'; archived ones are no longer depth).
    "dead" INTEGER NOT NULL,

    CONSTRAINT "queue_depth_samples_pkey" PRIMARY KEY ("queue", "minute")
);
CREATE INDEX "queue_depth_samples_minute_idx" ON "queue_depth_samples"("minute");
