-- History that stays bounded when a feed serves the same document again and again
-- (docs/decisions/011-bounded-feed-history.md), and what the parser left out of a big document.

-- A delivery identical to the item's latest event from the same collector and origin (the same
-- payload apart from its observation time) changes nothing; it is counted on that event instead
-- of adding a row: `sightings` deliveries in all, the last of them observed at `last_seen_at`.
ALTER TABLE "news_events" ADD COLUMN "sightings" INTEGER NOT NULL DEFAULT 1;
ALTER TABLE "news_events" ADD COLUMN "last_seen_at" TIMESTAMPTZ(6);
ALTER TABLE "news_events" ADD CONSTRAINT "news_events_sightings_check" CHECK ("sightings" >= 1);

-- Entries past FEED_MAX_ENTRIES in the latest document of the source that went over it, out of
-- how many, and when; 0 once a document fits again. The running total is a metric.
ALTER TABLE "source_state" ADD COLUMN "entries_left_out" INTEGER NOT NULL DEFAULT 0;
ALTER TABLE "source_state" ADD COLUMN "entries_in_document" INTEGER;
ALTER TABLE "source_state" ADD COLUMN "entries_left_out_at" TIMESTAMPTZ(6);

-- The delay the scheduler chose for the next poll, so the source page can say when it is
-- shorter than the configured interval (a hot source).
ALTER TABLE "source_state" ADD COLUMN "poll_every_seconds" INTEGER;
