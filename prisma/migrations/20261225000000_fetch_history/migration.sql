-- Fetch history that stays bounded: fetch_attempts rows older than WIREWATCH_FETCH_HISTORY_DAYS
-- (14 by default) are folded into one row per source, UTC day and outcome code, then deleted
-- (workers/fetchHistory.ts). At 100,000 sources polled every 5 minutes that is 29 M attempt rows
-- a day kept for two weeks, and at most a few rows per source and day after that.
CREATE TABLE "fetch_attempts_daily" (
    "source_id" TEXT NOT NULL,
    "day" DATE NOT NULL,
    "code" TEXT NOT NULL,
    "attempts" INTEGER NOT NULL,
    "bytes" BIGINT NOT NULL,
    "duration_ms_sum" BIGINT NOT NULL,
    "duration_ms_max" INTEGER NOT NULL,
    CONSTRAINT "fetch_attempts_daily_pkey" PRIMARY KEY ("source_id", "day", "code")
);

-- page_looks is pruned by age (the same setting): the source page shows a day of them.
CREATE INDEX "page_looks_at_idx" ON "page_looks" ("at");
