-- The read path (seed 003: "the read path never touches the write database's tables"): the
-- stories readers see, kept current by the index stage (the processing line's last), and the
-- payloads built from them ready to send. Ingestion never reads these; the request path reads
-- only read_payloads (and Redis when configured), never news, news_events or another write table.

-- One row per story a reader can see: a live canonical item with its cluster's outlets, its
-- extraction's category and language. Written only by the index stage (workers/readmodel), over
-- an older item_version or when its outlets changed; deleted when the story is retracted or
-- becomes a duplicate of another.
CREATE TABLE "read_stories" (
    "story_key" TEXT NOT NULL,
    "source_id" TEXT NOT NULL,
    "item_version" INTEGER NOT NULL,
    "title" TEXT NOT NULL,
    "link" TEXT,
    "summary" TEXT,
    "category" TEXT,
    "language" TEXT,
    "breaking" BOOLEAN NOT NULL DEFAULT false,
    -- The cluster's live members, canonical first: [{"sourceId","source","link","firstSeenAt"}].
    "outlets" JSONB NOT NULL DEFAULT '[]',
    "outlet_count" INTEGER NOT NULL DEFAULT 1,
    "published_at" TIMESTAMPTZ(6),
    "first_seen_at" TIMESTAMPTZ(6) NOT NULL,
    -- When the shown version was fetched: a build's lag is its finish minus this (seed 003's
    -- "lag from fetch to availability in the read model").
    "fetched_at" TIMESTAMPTZ(6) NOT NULL,
    -- When the story last changed for a reader (a new version, an outlet added or gone).
    "updated_at" TIMESTAMPTZ(6) NOT NULL,
    "indexed_at" TIMESTAMPTZ(6) NOT NULL DEFAULT now(),
    CONSTRAINT "read_stories_pkey" PRIMARY KEY ("story_key")
);
CREATE INDEX "read_stories_first_seen_idx" ON "read_stories"("first_seen_at" DESC);
-- The builder's question: what changed since the last build.
CREATE INDEX "read_stories_indexed_idx" ON "read_stories"("indexed_at");

-- Payloads as they are sent (serialized JSON bytes with their strong ETag), by key, for the
-- request path when Redis is not configured: loaded into the process at start, so a restart
-- serves the last model at once. The newest model version's rows; older ones are replaced.
CREATE TABLE "read_payloads" (
    "key" TEXT NOT NULL,
    "model_version" BIGINT NOT NULL,
    "etag" TEXT NOT NULL,
    "body" BYTEA NOT NULL,
    "built_at" TIMESTAMPTZ(6) NOT NULL,
    CONSTRAINT "read_payloads_pkey" PRIMARY KEY ("key")
);

-- Every build of the read model: when, how long, what it held, why it ran, how stale its stories
-- were (lag from fetch, p50 / p99 over the stories that changed in it), or why it failed.
CREATE TABLE "read_model_builds" (
    "id" BIGSERIAL NOT NULL,
    "model_version" BIGINT NOT NULL,
    "started_at" TIMESTAMPTZ(6) NOT NULL,
    "finished_at" TIMESTAMPTZ(6),
    "build_ms" DOUBLE PRECISION,
    "stories" INTEGER NOT NULL DEFAULT 0,
    "changed" INTEGER NOT NULL DEFAULT 0,
    "payloads" INTEGER NOT NULL DEFAULT 0,
    "bytes" BIGINT NOT NULL DEFAULT 0,
    "lag_p50_ms" DOUBLE PRECISION,
    "lag_p99_ms" DOUBLE PRECISION,
    "trigger" TEXT NOT NULL,
    "error" TEXT,
    CONSTRAINT "read_model_builds_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "read_model_builds_started_idx" ON "read_model_builds"("started_at");
