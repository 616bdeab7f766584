-- The dedup stage (seed 002, "Removing duplicates without paying to compare everything"): every
-- item keeps its own row in `news`; a duplicate is linked to its cluster's canonical item
-- (news.duplicate_of, dedup_stage, dedup_score, dedup_threshold, dedup_at), never deleted. What
-- linked it, with the evidence, is a row of dedup_links; undoing or re-deciding a link ends that
-- row (ended_at, ended_reason) instead of deleting it.

ALTER TABLE "news" ADD COLUMN "dedup_threshold" DOUBLE PRECISION;
ALTER TABLE "news" ADD COLUMN "dedup_at" TIMESTAMPTZ(6);
CREATE INDEX "news_duplicate_of_idx" ON "news"("duplicate_of") WHERE "duplicate_of" IS NOT NULL;

-- The thresholds in force (one row). `thresholds` is lib/dedup's DedupThresholds, validated by
-- its zod schema when read; `revision` goes up on every change, and each decision records it.
CREATE TABLE "dedup_settings" (
    "id" INTEGER NOT NULL DEFAULT 1,
    "thresholds" JSONB NOT NULL,
    "revision" INTEGER NOT NULL DEFAULT 1,
    "updated_at" TIMESTAMPTZ(6) NOT NULL DEFAULT now(),
    "updated_by" TEXT,
    CONSTRAINT "dedup_settings_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "dedup_settings_one_row" CHECK ("id" = 1)
);

-- What the stage knows of each item at the version it last decided: the lookup keys of the
-- cascade's first three stages, and the outcome. Lookups only see live rows (not tombstoned,
-- with text), inside the window (first_seen_at).
CREATE TABLE "dedup_items" (
    "entry_key" TEXT NOT NULL,
    -- news.version these keys and this decision were made for; a result for an older version
    -- is never applied over a newer one.
    "version" INTEGER NOT NULL,
    "source_id" TEXT NOT NULL,
    "first_seen_at" TIMESTAMPTZ(6) NOT NULL,
    "live" BOOLEAN NOT NULL DEFAULT true,
    -- Stage 1: the normalised URL (lib/dedup/urlKey), null without a link.
    "url_key" TEXT,
    -- Stage 2: the exact fingerprint of the normalised text, hex.
    "content_key" TEXT,
    -- Stage 3: the 64-bit SimHash as a signed bigint and its four 16-bit bands (0..65535).
    "simhash" BIGINT,
    "band0" INTEGER,
    "band1" INTEGER,
    "band2" INTEGER,
    "band3" INTEGER,
    -- The cluster the item belongs to (null: alone), and what the last decision was:
    -- outcome 'unique' | 'duplicate' | 'review' | 'removed'; stage 'url' | 'exact' | 'near' |
    -- 'meaning' | 'review' (an operator's confirmation) | null.
    "cluster_id" BIGINT,
    "outcome" TEXT NOT NULL,
    "stage" TEXT,
    "settings_revision" INTEGER NOT NULL DEFAULT 1,
    "decided_at" TIMESTAMPTZ(6) NOT NULL DEFAULT now(),
    -- How long the decision took in the stage, for the latency plot.
    "decision_ms" DOUBLE PRECISION,
    CONSTRAINT "dedup_items_pkey" PRIMARY KEY ("entry_key")
);
CREATE INDEX "dedup_items_url_idx" ON "dedup_items"("url_key") WHERE "live" AND "url_key" IS NOT NULL;
CREATE INDEX "dedup_items_content_idx" ON "dedup_items"("content_key", "first_seen_at") WHERE "live";
CREATE INDEX "dedup_items_band0_idx" ON "dedup_items"("band0", "first_seen_at") WHERE "live";
CREATE INDEX "dedup_items_band1_idx" ON "dedup_items"("band1", "first_seen_at") WHERE "live";
CREATE INDEX "dedup_items_band2_idx" ON "dedup_items"("band2", "first_seen_at") WHERE "live";
CREATE INDEX "dedup_items_band3_idx" ON "dedup_items"("band3", "first_seen_at") WHERE "live";
CREATE INDEX "dedup_items_cluster_idx" ON "dedup_items"("cluster_id") WHERE "cluster_id" IS NOT NULL;
CREATE INDEX "dedup_items_decided_at_idx" ON "dedup_items"("decided_at");

-- One canonical item with its members (every item in a cluster has cluster_id set, the
-- canonical included). A cluster with one member left is dissolved (dissolved_at).
CREATE TABLE "dedup_clusters" (
    "id" BIGSERIAL NOT NULL,
    "canonical_key" TEXT NOT NULL,
    "members" INTEGER NOT NULL DEFAULT 1,
    "outlets" INTEGER NOT NULL DEFAULT 1,
    "first_seen_at" TIMESTAMPTZ(6) NOT NULL,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT now(),
    "updated_at" TIMESTAMPTZ(6) NOT NULL DEFAULT now(),
    "dissolved_at" TIMESTAMPTZ(6),
    CONSTRAINT "dedup_clusters_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "dedup_clusters_members_idx" ON "dedup_clusters"("members" DESC) WHERE "dissolved_at" IS NULL;
CREATE INDEX "dedup_clusters_updated_idx" ON "dedup_clusters"("updated_at" DESC);

-- What happened to a cluster, in order: created, joined, left, elected (a new canonical, with
-- why: the old one retracted, edited away or undone), dissolved.
CREATE TABLE "dedup_cluster_events" (
    "id" BIGSERIAL NOT NULL,
    "cluster_id" BIGINT NOT NULL,
    "at" TIMESTAMPTZ(6) NOT NULL DEFAULT now(),
    "kind" TEXT NOT NULL,
    "entry_key" TEXT,
    "detail" JSONB,
    CONSTRAINT "dedup_cluster_events_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "dedup_cluster_events_cluster_idx" ON "dedup_cluster_events"("cluster_id", "id");

-- Every link ever made, with why: the stage, the score against the threshold in force, the item
-- it matched (a member, maybe not the canonical) and the evidence (shared shingles, differing
-- words). The live link is the one with ended_at null; news.duplicate_of mirrors it.
CREATE TABLE "dedup_links" (
    "id" BIGSERIAL NOT NULL,
    "entry_key" TEXT NOT NULL,
    "duplicate_of" TEXT NOT NULL,
    "matched_key" TEXT NOT NULL,
    "cluster_id" BIGINT NOT NULL,
    "stage" TEXT NOT NULL,
    "score" DOUBLE PRECISION NOT NULL,
    "threshold" DOUBLE PRECISION NOT NULL,
    "settings_revision" INTEGER NOT NULL,
    "item_version" INTEGER NOT NULL,
    "evidence" JSONB,
    "decided_at" TIMESTAMPTZ(6) NOT NULL DEFAULT now(),
    "decided_by" TEXT NOT NULL DEFAULT 'dedup',
    -- 'undone' (an operator), 'edited' (the item changed away), 'retracted', 'rerun' (new
    -- thresholds), 'relinked' (its canonical changed: a new row follows).
    "ended_at" TIMESTAMPTZ(6),
    "ended_reason" TEXT,
    "ended_by" TEXT,
    CONSTRAINT "dedup_links_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "dedup_links_live_idx" ON "dedup_links"("entry_key") WHERE "ended_at" IS NULL;
CREATE INDEX "dedup_links_cluster_idx" ON "dedup_links"("cluster_id", "id");
CREATE INDEX "dedup_links_decided_idx" ON "dedup_links"("decided_at");

-- Pairs inside the grey band, for an operator: confirm (linked, stage 'review') or reject (never
-- merged again by that stage). The pair is stored in key order (a < b) so it is one row.
CREATE TABLE "dedup_reviews" (
    "id" BIGSERIAL NOT NULL,
    "entry_key" TEXT NOT NULL,
    "candidate_key" TEXT NOT NULL,
    "pair_a" TEXT NOT NULL,
    "pair_b" TEXT NOT NULL,
    "stage" TEXT NOT NULL,
    "score" DOUBLE PRECISION NOT NULL,
    "threshold" DOUBLE PRECISION NOT NULL,
    "item_version" INTEGER NOT NULL,
    "evidence" JSONB,
    -- 'pending' | 'confirmed' | 'rejected' | 'superseded' (the item changed or left first)
    "state" TEXT NOT NULL DEFAULT 'pending',
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT now(),
    "decided_at" TIMESTAMPTZ(6),
    "decided_by" TEXT,
    CONSTRAINT "dedup_reviews_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "dedup_reviews_pair_idx" ON "dedup_reviews"("pair_a", "pair_b", "stage");
CREATE INDEX "dedup_reviews_pending_idx" ON "dedup_reviews"("created_at") WHERE "state" = 'pending';

-- Re-running the cascade with new thresholds, like a repair: a dry run lists the links that
-- would appear or go; an apply makes them, with progress.
CREATE TABLE "dedup_runs" (
    "id" BIGSERIAL NOT NULL,
    "thresholds" JSONB NOT NULL,
    "dry_run" BOOLEAN NOT NULL,
    "state" TEXT NOT NULL DEFAULT 'running',
    "actor" TEXT NOT NULL,
    "started_at" TIMESTAMPTZ(6) NOT NULL DEFAULT now(),
    "ended_at" TIMESTAMPTZ(6),
    "total" INTEGER NOT NULL DEFAULT 0,
    "scanned" INTEGER NOT NULL DEFAULT 0,
    "appear" INTEGER NOT NULL DEFAULT 0,
    "go" INTEGER NOT NULL DEFAULT 0,
    "applied" INTEGER NOT NULL DEFAULT 0,
    "error" TEXT,
    CONSTRAINT "dedup_runs_pkey" PRIMARY KEY ("id")
);
CREATE TABLE "dedup_run_changes" (
    "run_id" BIGINT NOT NULL,
    "entry_key" TEXT NOT NULL,
    -- 'appear' | 'go' | 'change' (linked elsewhere or by another stage)
    "change" TEXT NOT NULL,
    "before" JSONB,
    "after" JSONB,
    CONSTRAINT "dedup_run_changes_pkey" PRIMARY KEY ("run_id", "entry_key")
);

-- The processing line's catch-up sweep: per stage, how far through news.updated_at it has
-- enqueued everything (a NOTIFY heard while no worker listened is found again from here).
CREATE TABLE "line_cursors" (
    "stage" TEXT NOT NULL,
    "updated_at" TIMESTAMPTZ(6) NOT NULL,
    "entry_key" TEXT NOT NULL DEFAULT '',
    "swept_at" TIMESTAMPTZ(6) NOT NULL DEFAULT now(),
    CONSTRAINT "line_cursors_pkey" PRIMARY KEY ("stage")
);

-- The sweep skips an item whose job for its version is a dead letter (or was discarded): it is
-- the operator's to requeue, and enqueueing it afresh every sweep would retry a permanent fault
-- for ever. jobs_live_key_idx only covers ready and leased jobs.
CREATE INDEX "jobs_settled_key_idx" ON "jobs"("queue", "key")
    WHERE "key" IS NOT NULL AND "state" IN ('dead', 'archived');
