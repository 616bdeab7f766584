-- The story-API copy (seed 001): a source kind `story-api` consumed by signed webhooks plus a
-- catch-up cursor, kept as one row per story with two single-statement writes, and one-time
-- side effects claimed before they are acted on. workers/stories/README.md tells the whole story.

-- What a story-api source follows and how it gets a story's state.
ALTER TABLE "sources" ADD COLUMN "tickers" TEXT[] NOT NULL DEFAULT '{}';
-- 'snapshot' (apply the snapshot in the event) or 'fetch' (fetch the story when notified).
ALTER TABLE "sources" ADD COLUMN "story_mode" TEXT;
-- Standard Webhooks secrets (whsec_…); several while a secret is being rotated.
ALTER TABLE "sources" ADD COLUMN "webhook_secrets" TEXT[] NOT NULL DEFAULT '{}';
ALTER TABLE "sources" ADD CONSTRAINT "sources_story_mode_check"
    CHECK ("story_mode" IS NULL OR "story_mode" IN ('snapshot', 'fetch'));

-- One row per story, kept when the story closes: the closed row is what stops a late event or a
-- stale read from bringing it back. Written only by the two statements in workers/stories/writes.ts.
CREATE TABLE "stories" (
    "source_id" TEXT NOT NULL,
    "id" TEXT NOT NULL,
    "ticker" TEXT,
    "version" INTEGER NOT NULL,
    "closed" BOOLEAN NOT NULL DEFAULT false,
    -- The API's snapshot; null once closed.
    "story" JSONB,
    "updated_at" TIMESTAMPTZ(6) NOT NULL DEFAULT now(),

    CONSTRAINT "stories_pkey" PRIMARY KEY ("source_id", "id"),
    CONSTRAINT "stories_source_fkey" FOREIGN KEY ("source_id") REFERENCES "sources"("id") ON DELETE CASCADE,
    CONSTRAINT "stories_closed_check" CHECK ("closed" = ("story" IS NULL))
);
CREATE INDEX "stories_ticker_idx" ON "stories" ("source_id", "ticker", "closed");

-- One-time side effects ("story became strong"): claimed with one insert before acting, so a
-- crash between claim and send loses one notification rather than sending it twice.
CREATE TABLE "claimed" (
    "key" TEXT NOT NULL,
    "source_id" TEXT,
    "claimed_at" TIMESTAMPTZ(6) NOT NULL DEFAULT now(),
    -- Set once the side effect was carried out; null after a crash in between.
    "sent_at" TIMESTAMPTZ(6),

    CONSTRAINT "claimed_pkey" PRIMARY KEY ("key"),
    CONSTRAINT "claimed_source_fkey" FOREIGN KEY ("source_id") REFERENCES "sources"("id") ON DELETE CASCADE
);
CREATE INDEX "claimed_source_idx" ON "claimed" ("source_id", "claimed_at");

-- The tickers a source follows, and when each was added: events published before a ticker was
-- added are history (no notifications), and its stories are loaded once (GET /v1/stories).
CREATE TABLE "story_tickers" (
    "source_id" TEXT NOT NULL,
    "ticker" TEXT NOT NULL,
    "added_at" TIMESTAMPTZ(6) NOT NULL DEFAULT now(),
    "loaded_at" TIMESTAMPTZ(6),

    CONSTRAINT "story_tickers_pkey" PRIMARY KEY ("source_id", "ticker"),
    CONSTRAINT "story_tickers_source_fkey" FOREIGN KEY ("source_id") REFERENCES "sources"("id") ON DELETE CASCADE
);

-- Per source: the catch-up cursor (saved only after its page is applied), reloads, and the
-- reconciliation of webhooks against the catch-up.
CREATE TABLE "story_sync" (
    "source_id" TEXT NOT NULL,
    -- Null: catch up from the start of the API's window.
    "cursor" TEXT,
    "cursor_saved_at" TIMESTAMPTZ(6),
    -- When a catch-up last reached the end of the event list.
    "caught_up_at" TIMESTAMPTZ(6),
    "last_error" TEXT,
    "last_error_at" TIMESTAMPTZ(6),
    "reloads" INTEGER NOT NULL DEFAULT 0,
    "reload_started_at" TIMESTAMPTZ(6),
    "reload_finished_at" TIMESTAMPTZ(6),
    -- Events the catch-up found that no webhook had delivered (published longer ago than the grace).
    "missed_webhooks" BIGINT NOT NULL DEFAULT 0,
    -- Events a webhook delivered that the catch-up passed without listing.
    "unlisted_events" BIGINT NOT NULL DEFAULT 0,

    CONSTRAINT "story_sync_pkey" PRIMARY KEY ("source_id"),
    CONSTRAINT "story_sync_source_fkey" FOREIGN KEY ("source_id") REFERENCES "sources"("id") ON DELETE CASCADE
);

-- Every event seen, by either way: the webhook's idempotency key, and what reconciliation reads.
CREATE TABLE "story_events" (
    "source_id" TEXT NOT NULL,
    "event_id" TEXT NOT NULL,
    "type" TEXT NOT NULL,
    "ticker" TEXT,
    "published_at" TIMESTAMPTZ(6) NOT NULL,
    "webhook_at" TIMESTAMPTZ(6),
    -- Webhook deliveries of this event, replays included.
    "webhook_deliveries" INTEGER NOT NULL DEFAULT 0,
    "catchup_at" TIMESTAMPTZ(6),
    "applied_at" TIMESTAMPTZ(6),
    -- Judged once by reconciliation (missed by webhooks, not listed by the catch-up, or neither).
    "reconciled" BOOLEAN NOT NULL DEFAULT false,

    CONSTRAINT "story_events_pkey" PRIMARY KEY ("source_id", "event_id"),
    CONSTRAINT "story_events_source_fkey" FOREIGN KEY ("source_id") REFERENCES "sources"("id") ON DELETE CASCADE
);
CREATE INDEX "story_events_published_idx" ON "story_events" ("source_id", "published_at");
-- What reconciliation still has to judge: recent events only, so its pass stays small.
CREATE INDEX "story_events_unreconciled_idx" ON "story_events" ("source_id", "published_at")
    WHERE NOT "reconciled";

-- Webhook deliveries refused, by reason (bad signature, stale timestamp, too large, …), so the
-- dashboard can say why. Not tied to a source row: a forged delivery may name none.
CREATE TABLE "story_webhook_rejections" (
    "source_id" TEXT NOT NULL,
    "reason" TEXT NOT NULL,
    "count" BIGINT NOT NULL DEFAULT 0,
    "first_at" TIMESTAMPTZ(6) NOT NULL DEFAULT now(),
    "last_at" TIMESTAMPTZ(6) NOT NULL DEFAULT now(),
    "last_webhook_id" TEXT,
    "last_detail" TEXT,

    CONSTRAINT "story_webhook_rejections_pkey" PRIMARY KEY ("source_id", "reason")
);
