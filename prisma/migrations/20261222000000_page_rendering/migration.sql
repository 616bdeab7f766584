-- The browser fetch path (seed 002: HTTP first, a full browser only as the fallback).
--
-- sources.render: how a page source is read. 'http' (the default): its HTML as served.
-- 'browser': the HTML rendered in headless Chromium, for sites whose headlines appear only after
-- their scripts run. Only page sources use it.
ALTER TABLE "sources" ADD COLUMN "render" TEXT NOT NULL DEFAULT 'http';

-- One row per look at a page source, by either path, so the source page can show what the browser
-- costs beside what HTTP costs and offer the browser when HTTP finds no headlines.
CREATE TABLE "page_looks" (
    "id" BIGSERIAL NOT NULL,
    "source_id" TEXT NOT NULL,
    "collector" TEXT NOT NULL,
    "at" TIMESTAMPTZ(6) NOT NULL DEFAULT now(),
    -- 'http' | 'browser'
    "mode" TEXT NOT NULL,
    -- the look's outcome code (lib/codes.ts): 'ok', 'parse_error', 'timeout', ...
    "code" TEXT NOT NULL,
    "wall_ms" INTEGER NOT NULL,
    -- CPU time the look cost: for HTTP the reading of the HTML in this process, for the browser
    -- the renderer's main-thread task time (Chromium's Performance.getMetrics TaskDuration).
    "cpu_ms" INTEGER NOT NULL,
    -- Requests the look made (the page itself included) and how many of them were refused.
    "requests" INTEGER NOT NULL DEFAULT 1,
    "blocked" INTEGER NOT NULL DEFAULT 0,
    -- Up to 20 refused requests: [{ "url", "reason" }].
    "blocked_detail" JSONB,
    "bytes" INTEGER NOT NULL DEFAULT 0,
    "headlines" INTEGER NOT NULL DEFAULT 0,
    "message" TEXT,
    CONSTRAINT "page_looks_pkey" PRIMARY KEY ("id")
);

CREATE INDEX "page_looks_source_at_idx" ON "page_looks" ("source_id", "at" DESC);
