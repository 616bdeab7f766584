-- Extraction as a supplier (seed 002: "checked before it is trusted", "a second supplier ready",
-- "costed per item"): what each canonical item is about, at the version it was made for, with
-- the provider, model and prompt that made it; and the cost ledger's rows tied to the item,
-- its source and the outcome of every attempt, so "is this source worth crawling?" is a query.

-- One row per canonical item: its latest valid extraction. A duplicate has none: it takes its
-- cluster's (news.duplicate_of → the canonical's row), so nothing is paid for twice.
-- Written only over an older item_version (the stage's version guard); never an invalid one
-- (every row passed the declared schema, lib/extract/schema.ts).
CREATE TABLE "item_extractions" (
    "entry_key" TEXT NOT NULL,
    "item_version" INTEGER NOT NULL,
    "source_id" TEXT NOT NULL,
    "language" TEXT NOT NULL,
    "category" TEXT,
    "entities" JSONB NOT NULL DEFAULT '[]',
    "summary" TEXT,
    -- Who made it: the provider that answered ('local', 'llm'), its model and prompt version.
    "provider" TEXT NOT NULL,
    "model" TEXT NOT NULL,
    "prompt_version" TEXT NOT NULL,
    -- The configured chain when it was made (lib/extract chainId): a model or prompt change makes
    -- another id, and the backfill re-extracts rows of an older one at low priority.
    "extractor" TEXT NOT NULL,
    -- Answered by a provider after the first of the chain (a fallover).
    "fell_over" BOOLEAN NOT NULL DEFAULT false,
    -- What the job paid for this version, all attempts (corrections, failed providers) included.
    "calls" INTEGER NOT NULL DEFAULT 0,
    "tokens_in" INTEGER NOT NULL DEFAULT 0,
    "tokens_out" INTEGER NOT NULL DEFAULT 0,
    "cost_usd" DOUBLE PRECISION NOT NULL DEFAULT 0,
    "extracted_at" TIMESTAMPTZ(6) NOT NULL DEFAULT now(),
    CONSTRAINT "item_extractions_pkey" PRIMARY KEY ("entry_key"),
    CONSTRAINT "item_extractions_language_check" CHECK ("language" IN ('bn', 'en', 'other'))
);
-- The backfill's walk: rows made by another chain than the configured one.
CREATE INDEX "item_extractions_extractor_idx" ON "item_extractions"("extractor", "entry_key");
-- The Costs page: per source, over time.
CREATE INDEX "item_extractions_source_idx" ON "item_extractions"("source_id", "extracted_at");
CREATE INDEX "item_extractions_at_idx" ON "item_extractions"("extracted_at");

-- Every call to a supplier, tied to what it was for. Embedding calls leave the item columns
-- empty (a batch is many items); an extraction call names its item, version and source.
-- outcome: 'ok', or the failure's code (rate_limited, timeout, provider_error, malformed,
-- schema_violation, budget_exhausted, breaker_open, unavailable, bad_input).
-- correction: the call was the one correction retry that fed validation errors back.
ALTER TABLE "provider_calls" ADD COLUMN "prompt_version" TEXT;
ALTER TABLE "provider_calls" ADD COLUMN "outcome" TEXT;
ALTER TABLE "provider_calls" ADD COLUMN "correction" BOOLEAN NOT NULL DEFAULT false;
ALTER TABLE "provider_calls" ADD COLUMN "entry_key" TEXT;
ALTER TABLE "provider_calls" ADD COLUMN "item_version" INTEGER;
ALTER TABLE "provider_calls" ADD COLUMN "source_id" TEXT;
-- Spend per provider and day (the budget), per source and per article (the Costs page).
CREATE INDEX "provider_calls_provider_idx" ON "provider_calls"("purpose", "provider", "at");
CREATE INDEX "provider_calls_source_idx" ON "provider_calls"("source_id", "at") WHERE "source_id" IS NOT NULL;
CREATE INDEX "provider_calls_entry_idx" ON "provider_calls"("entry_key") WHERE "entry_key" IS NOT NULL;
