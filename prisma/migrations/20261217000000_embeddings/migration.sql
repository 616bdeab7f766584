-- Meaning (seed 002: "every stored meaning-vector records which model produced it, so upgrading
-- the model is a gradual backfill rather than a stop-the-world migration"): the models that ever
-- embedded anything, every item's vector per model, the search documents, and every call made to
-- a paid or remote supplier (embeddings here, extraction later) with its tokens and cost.

-- One row per model ever used. `model` is the id printed by `cli embed` and stored with every
-- vector ("shipped:use-lite@0.2.0", "http:text-embedding-3-small@api.openai.com",
-- "onnx:multilingual-e5-small@<digest>", "lexical:char3-hash-512@1"). kind 'lexical' is never
-- presented as meaning. state: 'backfilling' until every canonical item has its vector,
-- then 'complete'; 'retired' when an operator drops it from search.
CREATE TABLE "embedding_models" (
    "id" SERIAL NOT NULL,
    "model" TEXT NOT NULL,
    "provider" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "version" TEXT NOT NULL,
    "dims" INTEGER NOT NULL,
    "kind" TEXT NOT NULL,
    -- Languages it understands ('en', 'bn'), and whether a Bangla query finds the English story.
    "languages" TEXT[] NOT NULL DEFAULT ARRAY[]::TEXT[],
    "cross_lingual" BOOLEAN NOT NULL DEFAULT false,
    -- Stage 4 (meaning): cosine at or above `meaning_threshold` links a grey-band pair; below
    -- `distinct_threshold` it is not a duplicate and goes to no review. Calibrated on labelled
    -- pairs; how, on what, with what result, in `calibration`.
    "meaning_threshold" DOUBLE PRECISION,
    "distinct_threshold" DOUBLE PRECISION,
    "calibration" JSONB,
    "state" TEXT NOT NULL DEFAULT 'backfilling',
    "backfill_started_at" TIMESTAMPTZ(6),
    "backfill_completed_at" TIMESTAMPTZ(6),
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT now(),
    "last_used_at" TIMESTAMPTZ(6),
    CONSTRAINT "embedding_models_pkey" PRIMARY KEY ("id")
);
CREATE UNIQUE INDEX "embedding_models_model_key" ON "embedding_models"("model");

-- One vector per item and model (the latest version embedded). `embedding` is the unit vector;
-- `code` its signs (one bit a dimension), the portable search path's first pass where pgvector is
-- missing; lang, source and first sight are copied here so a vector scan filters without a join.
-- Where pgvector exists, an HNSW index per model is made at start on (embedding::vector(dims)).
CREATE TABLE "item_vectors" (
    "model_id" INTEGER NOT NULL,
    "entry_key" TEXT NOT NULL,
    "item_version" INTEGER NOT NULL,
    "embedding" REAL[] NOT NULL,
    "code" BIT VARYING NOT NULL,
    "lang" TEXT,
    "source_id" TEXT NOT NULL,
    "first_seen_at" TIMESTAMPTZ(6) NOT NULL,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT now(),
    CONSTRAINT "item_vectors_pkey" PRIMARY KEY ("model_id", "entry_key")
);
CREATE INDEX "item_vectors_entry_idx" ON "item_vectors"("entry_key");
CREATE INDEX "item_vectors_first_seen_idx" ON "item_vectors"("model_id", "first_seen_at" DESC);
-- Embeddings per minute on the dashboard.
CREATE INDEX "item_vectors_created_idx" ON "item_vectors"("created_at");

-- The full-text side of search: one row per item that survived dedup stages 1-3 (a duplicate's
-- text is found through its canonical). `tsv` is built per language: 'english' stems English,
-- 'simple' keeps Bangla words whole (the parser keeps Bengali script together under a UTF-8
-- ctype), and the title weighs more than the summary.
CREATE TABLE "search_docs" (
    "entry_key" TEXT NOT NULL,
    "item_version" INTEGER NOT NULL,
    "source_id" TEXT NOT NULL,
    "lang" TEXT,
    "first_seen_at" TIMESTAMPTZ(6) NOT NULL,
    "tsv" TSVECTOR NOT NULL,
    "updated_at" TIMESTAMPTZ(6) NOT NULL DEFAULT now(),
    CONSTRAINT "search_docs_pkey" PRIMARY KEY ("entry_key")
);
CREATE INDEX "search_docs_tsv_idx" ON "search_docs" USING GIN ("tsv");
CREATE INDEX "search_docs_first_seen_idx" ON "search_docs"("first_seen_at" DESC);

-- Every call to a supplier (embeddings, extraction): what it cost, whether it answered, how
-- long it took. The Costs page and the cost metrics read it.
CREATE TABLE "provider_calls" (
    "id" BIGSERIAL NOT NULL,
    "at" TIMESTAMPTZ(6) NOT NULL DEFAULT now(),
    "purpose" TEXT NOT NULL,
    "provider" TEXT NOT NULL,
    "model" TEXT NOT NULL,
    "ok" BOOLEAN NOT NULL,
    "status" INTEGER,
    "error" TEXT,
    "items" INTEGER NOT NULL DEFAULT 0,
    "input_tokens" INTEGER NOT NULL DEFAULT 0,
    "output_tokens" INTEGER NOT NULL DEFAULT 0,
    "cost_usd" DOUBLE PRECISION NOT NULL DEFAULT 0,
    "latency_ms" DOUBLE PRECISION NOT NULL,
    "attempt" INTEGER NOT NULL DEFAULT 1,
    CONSTRAINT "provider_calls_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "provider_calls_at_idx" ON "provider_calls"("at");
CREATE INDEX "provider_calls_model_idx" ON "provider_calls"("model", "at");

-- Stage 4 decided this item at this version with this model (its grey pairs compared by meaning).
ALTER TABLE "dedup_items" ADD COLUMN "meaning_version" INTEGER;
ALTER TABLE "dedup_items" ADD COLUMN "meaning_model_id" INTEGER;
-- Stage 4's sweep: the items left in review.
CREATE INDEX "dedup_items_review_idx" ON "dedup_items"("decided_at") WHERE "outcome" = 'review';
