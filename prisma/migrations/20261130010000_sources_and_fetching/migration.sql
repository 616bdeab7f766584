-- Sources issue: how sources are polled and watched. `sources` stays configuration (it can be
-- re-synced from wirewatch.config.json); what fetching learns lives in `source_state`.

-- A page source is a fallback observer of another source's items (seed 000: collector A's page
-- observer and the primary stream see the same headline): `observes` names that source, and the
-- page's observations are written under its id, so both land on one row.
ALTER TABLE "sources"
    ADD COLUMN "observes" TEXT,
    ADD COLUMN "backfill_url" TEXT,
    ADD COLUMN "poll_interval_seconds" INTEGER NOT NULL DEFAULT 300,
    ADD COLUMN "collectors" TEXT[] NOT NULL DEFAULT ARRAY['A']::TEXT[],
    ADD COLUMN "config_origin" TEXT NOT NULL DEFAULT 'dashboard',
    ADD CONSTRAINT "sources_poll_interval_check" CHECK ("poll_interval_seconds" BETWEEN 5 AND 86400),
    ADD CONSTRAINT "sources_config_origin_check" CHECK ("config_origin" IN ('file', 'dashboard')),
    ADD CONSTRAINT "sources_observes_fkey" FOREIGN KEY ("observes") REFERENCES "sources"("id")
        ON DELETE SET NULL ON UPDATE CASCADE;

CREATE TABLE "source_state" (
    "source_id" TEXT NOT NULL,
    -- conditional GET
    "etag" TEXT,
    "last_modified" TEXT,
    "body_sha256" TEXT,
    "trusts_validators" BOOLEAN NOT NULL DEFAULT true,
    "last_full_fetch_at" TIMESTAMPTZ(6),
    -- schedule
    "next_poll_at" TIMESTAMPTZ(6),
    "last_polled_at" TIMESTAMPTZ(6),
    "hot_until" TIMESTAMPTZ(6),
    -- circuit breaker, shared by every worker process
    "breaker_state" TEXT NOT NULL DEFAULT 'closed',
    "breaker_failures" INTEGER NOT NULL DEFAULT 0,
    "breaker_changed_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "breaker_probe_owner" TEXT,
    "breaker_probe_until" TIMESTAMPTZ(6),
    -- what went wrong last, as a stable code and the message behind it
    "last_error_code" TEXT,
    "last_error_message" TEXT,
    "last_error_at" TIMESTAMPTZ(6),
    "disabled_reason" TEXT,
    "disabled_at" TIMESTAMPTZ(6),
    "updated_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "source_state_pkey" PRIMARY KEY ("source_id"),
    CONSTRAINT "source_state_breaker_check" CHECK ("breaker_state" IN ('closed', 'open', 'half_open'))
);

ALTER TABLE "source_state" ADD CONSTRAINT "source_state_source_id_fkey"
    FOREIGN KEY ("source_id") REFERENCES "sources"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Every fetch attempt, so error and 304 rates can be shown over time.
CREATE TABLE "fetch_attempts" (
    "id" BIGSERIAL NOT NULL,
    "source_id" TEXT NOT NULL,
    "collector" TEXT NOT NULL,
    "started_at" TIMESTAMPTZ(6) NOT NULL,
    "duration_ms" INTEGER NOT NULL,
    "code" TEXT NOT NULL,
    "http_status" INTEGER,
    "bytes" INTEGER NOT NULL DEFAULT 0,
    "not_modified" BOOLEAN NOT NULL DEFAULT false,
    "conditional" BOOLEAN NOT NULL DEFAULT true,
    "retry" INTEGER NOT NULL DEFAULT 0,
    "message" TEXT,
    CONSTRAINT "fetch_attempts_pkey" PRIMARY KEY ("id")
);

CREATE INDEX "fetch_attempts_source_started_idx" ON "fetch_attempts"("source_id", "started_at" DESC);
CREATE INDEX "fetch_attempts_started_idx" ON "fetch_attempts"("started_at" DESC);

-- Per collector: connection activity apart from content arrival (seed 000), and the gap between
-- items this source usually has, learned from its history, so "quiet" and "silent" differ.
CREATE TABLE "collector_status" (
    "source_id" TEXT NOT NULL,
    "collector" TEXT NOT NULL,
    "connected" BOOLEAN NOT NULL DEFAULT false,
    "last_activity_at" TIMESTAMPTZ(6),
    "last_activity_kind" TEXT,
    "last_content_at" TIMESTAMPTZ(6),
    "usual_gap_seconds" DOUBLE PRECISION,
    "gaps_seen" INTEGER NOT NULL DEFAULT 0,
    "updated_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "collector_status_pkey" PRIMARY KEY ("source_id", "collector")
);

ALTER TABLE "collector_status" ADD CONSTRAINT "collector_status_source_id_fkey"
    FOREIGN KEY ("source_id") REFERENCES "sources"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- robots.txt per origin (scheme://host:port), cached until expires_at.
CREATE TABLE "robots_cache" (
    "origin" TEXT NOT NULL,
    "status" INTEGER NOT NULL,
    "body" TEXT NOT NULL,
    "fetched_at" TIMESTAMPTZ(6) NOT NULL,
    "expires_at" TIMESTAMPTZ(6) NOT NULL,
    CONSTRAINT "robots_cache_pkey" PRIMARY KEY ("origin")
);

-- Our own outages: most unrelated hosts failing at once is the local network, not the sources.
CREATE TABLE "network_outages" (
    "id" BIGSERIAL NOT NULL,
    "started_at" TIMESTAMPTZ(6) NOT NULL,
    "ended_at" TIMESTAMPTZ(6),
    "failing_hosts" INTEGER NOT NULL,
    "total_hosts" INTEGER NOT NULL,
    "detail" TEXT,
    CONSTRAINT "network_outages_pkey" PRIMARY KEY ("id")
);
