-- Claims rolled up per queue and minute (docs/decisions/017): the claim statement adds its
-- jobs to one row instead of inserting a lease_events row per job (6.5–7.8 ms of a 26–29 ms
-- claim of 1,000, and most of its WAL). lease_events keeps what is rare and informative:
-- reclaims, expiries and releases, with the lease's age.
CREATE TABLE "queue_claim_stats" (
    "queue" TEXT NOT NULL,
    -- date_trunc('minute', now()) of the claim, by the database clock.
    "minute" TIMESTAMPTZ(6) NOT NULL,
    "claims" BIGINT NOT NULL DEFAULT 0,
    -- Of the claims, jobs whose previous lease had run out.
    "reclaimed" BIGINT NOT NULL DEFAULT 0,
    -- Sum and maximum of the claimed jobs' waits (due → claimed, ms).
    "wait_ms_sum" BIGINT NOT NULL DEFAULT 0,
    "wait_ms_max" INTEGER NOT NULL DEFAULT 0,
    -- Claims per wait bucket, not cumulative: element i counts waits <= CLAIM_WAIT_BUCKETS_MS[i]
    -- (lib/claimWaits.ts) and above the edge before it; the last element counts the rest.
    "wait_buckets" BIGINT[] NOT NULL,

    CONSTRAINT "queue_claim_stats_pkey" PRIMARY KEY ("queue", "minute")
);
CREATE INDEX "queue_claim_stats_minute_idx" ON "queue_claim_stats"("minute");
