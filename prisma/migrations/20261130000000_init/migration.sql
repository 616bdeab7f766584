-- wirewatch: sources, the current-row table, the append-only audit table, repair runs,
-- and the merge rule of the storage contract (news_merge), shared by the writer and by repair.

CREATE TABLE "sources" (
    "id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "url" TEXT,
    "allow_private" BOOLEAN NOT NULL DEFAULT false,
    "enabled" BOOLEAN NOT NULL DEFAULT true,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "sources_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "sources_kind_check" CHECK ("kind" IN ('feed', 'stream', 'page', 'backfill', 'story-api'))
);

CREATE TABLE "news" (
    "entry_key" TEXT NOT NULL,
    "source_id" TEXT NOT NULL,
    "canonical_id" TEXT NOT NULL,
    "quality" TEXT NOT NULL,
    "title" TEXT,
    "title_stamp" BIGINT,
    "link" TEXT,
    "link_stamp" BIGINT,
    "summary" TEXT,
    "summary_stamp" BIGINT,
    "category" TEXT,
    "category_stamp" BIGINT,
    "language" TEXT,
    "published_at" TIMESTAMPTZ(6),
    "breaking" BOOLEAN NOT NULL DEFAULT false,
    "instruments" TEXT[] NOT NULL DEFAULT ARRAY[]::TEXT[],
    "revision" BIGINT,
    "version" INTEGER NOT NULL DEFAULT 1,
    "content_hash" TEXT,
    "first_seen_at" TIMESTAMPTZ(6) NOT NULL,
    "first_source" TEXT NOT NULL,
    "first_collector" TEXT NOT NULL,
    "last_result" TEXT NOT NULL,
    "deleted_at" TIMESTAMPTZ(6),
    "duplicate_of" TEXT,
    "dedup_stage" TEXT,
    "dedup_score" DOUBLE PRECISION,
    "updated_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    CONSTRAINT "news_pkey" PRIMARY KEY ("entry_key"),
    CONSTRAINT "news_quality_check" CHECK ("quality" IN ('fallback', 'authoritative'))
);

CREATE INDEX "news_updated_at_idx" ON "news"("updated_at" DESC);
CREATE INDEX "news_source_first_seen_idx" ON "news"("source_id", "first_seen_at" DESC);

ALTER TABLE "news" ADD CONSTRAINT "news_source_id_fkey"
    FOREIGN KEY ("source_id") REFERENCES "sources"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- No foreign key to sources: an observation naming an unknown source is still recorded
-- (as rejected), never dropped.
CREATE TABLE "news_events" (
    "id" BIGSERIAL NOT NULL,
    "entry_key" TEXT,
    "source_id" TEXT NOT NULL,
    "collector" TEXT NOT NULL,
    "origin" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "observed_at" TIMESTAMPTZ(6) NOT NULL,
    "received_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "revision" BIGINT,
    "payload" JSONB NOT NULL,
    "result" TEXT NOT NULL,
    "reason" TEXT,
    "version" INTEGER,
    CONSTRAINT "news_events_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "news_events_result_check"
        CHECK ("result" IN ('inserted', 'upgraded', 'unchanged', 'updated', 'tombstoned', 'rejected'))
);

CREATE INDEX "news_events_entry_key_idx" ON "news_events"("entry_key", "id");
CREATE INDEX "news_events_received_at_idx" ON "news_events"("received_at" DESC);

CREATE TABLE "repair_runs" (
    "id" BIGSERIAL NOT NULL,
    "actor" TEXT NOT NULL,
    "dry_run" BOOLEAN NOT NULL,
    "status" TEXT NOT NULL,
    "started_at" TIMESTAMPTZ(6) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "finished_at" TIMESTAMPTZ(6),
    "rows_total" INTEGER NOT NULL DEFAULT 0,
    "rows_examined" INTEGER NOT NULL DEFAULT 0,
    "rows_changed" INTEGER NOT NULL DEFAULT 0,
    "error" TEXT,
    CONSTRAINT "repair_runs_pkey" PRIMARY KEY ("id")
);

CREATE TABLE "repair_changes" (
    "id" BIGSERIAL NOT NULL,
    "run_id" BIGINT NOT NULL,
    "entry_key" TEXT NOT NULL,
    "diff" JSONB NOT NULL,
    "applied" BOOLEAN NOT NULL DEFAULT false,
    CONSTRAINT "repair_changes_pkey" PRIMARY KEY ("id")
);

CREATE INDEX "repair_changes_run_idx" ON "repair_changes"("run_id");

ALTER TABLE "repair_changes" ADD CONSTRAINT "repair_changes_run_id_fkey"
    FOREIGN KEY ("run_id") REFERENCES "repair_runs"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Instruments as a set: distinct, in byte order (COLLATE "C"), so the same set is always the
-- same array whatever the database's collation or the client's sort.
CREATE FUNCTION news_instruments(xs text[]) RETURNS text[]
LANGUAGE sql IMMUTABLE AS $$
    SELECT coalesce(array_agg(x ORDER BY x), '{}')
    FROM (SELECT DISTINCT x COLLATE "C" AS x FROM unnest(xs) AS x WHERE x <> '') AS distinct_xs
$$;

-- The hash of what a reader sees of an item; equal hashes mean no material difference.
-- published_at goes in as epoch seconds: a timestamptz rendered as text follows the session's
-- TimeZone, and two sessions must never disagree about whether content changed.
CREATE FUNCTION news_content_hash(n news) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
    SELECT encode(sha256(convert_to(json_build_array(
        n.title, n.link, n.summary, n.category, n.language, extract(epoch FROM n.published_at),
        n.breaking, news_instruments(n.instruments)
    )::text, 'UTF8')), 'hex')
$$;

-- The monotonic merge of the storage contract: what an authoritative observation `inc` makes of
-- the current row `cur`. It only ever moves a field toward more information:
--   * title, link, summary, category: an incoming value replaces the current one when the field
--     is empty or the incoming stamp is higher (a newer source revision, or authoritative over
--     fallback); a value with a lower or equal stamp never replaces one. Stamps are kept per
--     field, so a late observation of an older revision can fill a gap but never undo a newer
--     value, whatever order deliveries arrive in.
--   * language, published_at: filled when empty, never changed.
--   * breaking only goes false -> true; instruments only grow (sorted union).
--   * first-seen fields, tombstones and dedup links are not touched here.
-- The version goes up (and last_result says 'upgraded' or 'updated') only when what a reader
-- sees changes. A newer stamp with an identical value is still recorded (so an older revision
-- cannot later win), with last_result 'unchanged' and no version bump.
-- The caller decides whether `inc` may modify at all (fallback never does; tombstones are final).
CREATE FUNCTION news_merge(cur news, inc news) RETURNS news
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
    m news := cur;
    edited boolean := false;
BEGIN
    IF inc.title IS NOT NULL AND (cur.title IS NULL OR inc.title_stamp > cur.title_stamp) THEN
        edited := edited OR (cur.quality = 'authoritative' AND cur.title <> inc.title);
        m.title := inc.title;
        m.title_stamp := inc.title_stamp;
    END IF;
    IF inc.link IS NOT NULL AND (cur.link IS NULL OR inc.link_stamp > cur.link_stamp) THEN
        edited := edited OR (cur.quality = 'authoritative' AND cur.link <> inc.link);
        m.link := inc.link;
        m.link_stamp := inc.link_stamp;
    END IF;
    IF inc.summary IS NOT NULL AND (cur.summary IS NULL OR inc.summary_stamp > cur.summary_stamp) THEN
        edited := edited OR (cur.quality = 'authoritative' AND cur.summary <> inc.summary);
        m.summary := inc.summary;
        m.summary_stamp := inc.summary_stamp;
    END IF;
    IF inc.category IS NOT NULL AND (cur.category IS NULL OR inc.category_stamp > cur.category_stamp) THEN
        edited := edited OR (cur.quality = 'authoritative' AND cur.category <> inc.category);
        m.category := inc.category;
        m.category_stamp := inc.category_stamp;
    END IF;
    m.language := coalesce(cur.language, inc.language);
    m.published_at := coalesce(cur.published_at, inc.published_at);
    m.breaking := cur.breaking OR coalesce(inc.breaking, false);
    m.instruments := news_instruments(cur.instruments || inc.instruments);
    IF inc.quality = 'authoritative' THEN
        m.quality := 'authoritative';
    END IF;
    m.revision := greatest(cur.revision, inc.revision);
    m.content_hash := news_content_hash(m);

    IF m.content_hash IS DISTINCT FROM cur.content_hash OR m.quality <> cur.quality THEN
        m.version := cur.version + 1;
        m.last_result := CASE WHEN edited THEN 'updated' ELSE 'upgraded' END;
    ELSIF (m.title_stamp, m.link_stamp, m.summary_stamp, m.category_stamp, m.revision)
          IS DISTINCT FROM (cur.title_stamp, cur.link_stamp, cur.summary_stamp, cur.category_stamp, cur.revision) THEN
        m.last_result := 'unchanged';
    END IF;
    RETURN m;
END
$$;

-- What the audit trail says a row should be: every accepted delivery of `key`, in the order the
-- writer recorded them, folded with the writer's own rules (first delivery creates, fallback
-- never modifies, authoritative merges through news_merge, the first retraction is final).
-- Repair compares this with the current row. Each event's payload holds the observation in
-- news's column names, so jsonb_populate_record turns it back into a row.
CREATE FUNCTION news_rebuild(key text) RETURNS news
LANGUAGE plpgsql STABLE AS $$
DECLARE
    ev record;
    inc news;
    acc news;
BEGIN
    FOR ev IN
        SELECT e.kind, e.observed_at, e.payload FROM news_events e
        WHERE e.entry_key = key AND e.result <> 'rejected'
        ORDER BY e.id
    LOOP
        inc := jsonb_populate_record(NULL::news, ev.payload);
        IF acc.entry_key IS NULL THEN
            acc := inc;
            acc.instruments := news_instruments(inc.instruments);
            acc.version := 1;
            acc.content_hash := news_content_hash(acc);
            IF ev.kind = 'retract' THEN
                acc.deleted_at := ev.observed_at;
            END IF;
        ELSIF acc.deleted_at IS NOT NULL THEN
            CONTINUE;
        ELSIF ev.kind = 'retract' THEN
            acc.deleted_at := ev.observed_at;
        ELSIF inc.quality = 'authoritative' THEN
            acc := news_merge(acc, inc);
        END IF;
    END LOOP;
    RETURN acc;
END
$$;
