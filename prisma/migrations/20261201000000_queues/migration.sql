-- Queues issue: every unit of ingestion work is a row here, claimed on a timed lease, so a worker
-- dying, a stage failing or the database slowing loses nothing (docs/decisions/007).

-- One row per unit of work. A finished job is deleted (its effects live in the stage's own
-- tables); a job that exhausted its attempts stays as a dead letter, archived after its TTL.
CREATE TABLE "jobs" (
    "id" BIGSERIAL NOT NULL,
    "queue" TEXT NOT NULL,
    -- Idempotency: at most one live (ready or leased) job per (queue, key).
    "key" TEXT,
    "payload" JSONB NOT NULL DEFAULT '{}',
    "source_id" TEXT,
    "priority" INTEGER NOT NULL DEFAULT 0,
    "state" TEXT NOT NULL DEFAULT 'ready',
    -- Due time: not claimed before it (retries and the frontier's next poll set it ahead).
    "run_at" TIMESTAMPTZ(6) NOT NULL DEFAULT now(),
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "max_attempts" INTEGER NOT NULL DEFAULT 5,
    -- The lease: who holds it, until when (database clock), and the token every worker-owned
    -- write must match together with id and attempt (fencing).
    "lease_token" UUID,
    "lease_owner" TEXT,
    "leased_at" TIMESTAMPTZ(6),
    "lease_expires_at" TIMESTAMPTZ(6),
    -- Set by the sweeper when a lease ran out, so the next claim is recorded as a reclaim.
    "lease_expired" BOOLEAN NOT NULL DEFAULT false,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT now(),
    -- When the job last became wanted (enqueue, requeue, reschedule): queue lag starts here.
    "enqueued_at" TIMESTAMPTZ(6) NOT NULL DEFAULT now(),
    "first_failed_at" TIMESTAMPTZ(6),
    "last_failed_at" TIMESTAMPTZ(6),
    "last_error" JSONB,
    "fingerprint" TEXT,
    "dead_at" TIMESTAMPTZ(6),
    "archived_at" TIMESTAMPTZ(6),
    "requeues" INTEGER NOT NULL DEFAULT 0,

    CONSTRAINT "jobs_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "jobs_state_check" CHECK ("state" IN ('ready', 'leased', 'dead', 'archived')),
    CONSTRAINT "jobs_attempts_check" CHECK ("attempts" >= 0 AND "max_attempts" >= 1),
    CONSTRAINT "jobs_lease_check" CHECK (
        ("state" = 'leased') = ("lease_token" IS NOT NULL AND "lease_expires_at" IS NOT NULL))
);

CREATE UNIQUE INDEX "jobs_live_key_idx" ON "jobs"("queue", "key")
    WHERE "key" IS NOT NULL AND "state" IN ('ready', 'leased');
CREATE INDEX "jobs_claim_idx" ON "jobs"("queue", "priority" DESC, "run_at") WHERE "state" = 'ready';
CREATE INDEX "jobs_lease_expiry_idx" ON "jobs"("lease_expires_at") WHERE "state" = 'leased';
CREATE INDEX "jobs_dead_idx" ON "jobs"("queue", "dead_at") WHERE "state" = 'dead';
CREATE INDEX "jobs_fingerprint_idx" ON "jobs"("fingerprint") WHERE "state" IN ('dead', 'archived');
CREATE INDEX "jobs_source_idx" ON "jobs"("source_id") WHERE "source_id" IS NOT NULL;

-- Every failed attempt of a job, kept after the job succeeds or is requeued: its history.
CREATE TABLE "job_failures" (
    "id" BIGSERIAL NOT NULL,
    "job_id" BIGINT NOT NULL,
    "queue" TEXT NOT NULL,
    "attempt" INTEGER NOT NULL,
    "worker_id" TEXT,
    -- 'error' (the stage threw) or 'lease_expired' (its worker stopped answering).
    "kind" TEXT NOT NULL,
    "error" JSONB NOT NULL,
    "fingerprint" TEXT,
    "failed_at" TIMESTAMPTZ(6) NOT NULL DEFAULT now(),

    CONSTRAINT "job_failures_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "job_failures_kind_check" CHECK ("kind" IN ('error', 'lease_expired'))
);
CREATE INDEX "job_failures_job_idx" ON "job_failures"("job_id", "id");
CREATE INDEX "job_failures_failed_at_idx" ON "job_failures"("failed_at");

-- What happened to leases, for the dashboard: claims, extensions, expiries, reclaims, releases.
CREATE TABLE "lease_events" (
    "id" BIGSERIAL NOT NULL,
    "at" TIMESTAMPTZ(6) NOT NULL DEFAULT now(),
    "job_id" BIGINT NOT NULL,
    "queue" TEXT NOT NULL,
    "attempt" INTEGER NOT NULL,
    "worker_id" TEXT,
    "kind" TEXT NOT NULL,
    -- How old the lease was when this happened (0 for a claim).
    "lease_age_ms" INTEGER NOT NULL DEFAULT 0,
    -- For claims: how long the job had been due (run_at, by the database clock) when claimed.
    "wait_ms" INTEGER,

    CONSTRAINT "lease_events_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "lease_events_kind_check"
        CHECK ("kind" IN ('claimed', 'reclaimed', 'extended', 'expired', 'released'))
);
CREATE INDEX "lease_events_at_idx" ON "lease_events"("at");
CREATE INDEX "lease_events_job_idx" ON "lease_events"("job_id");

-- One row per worker process (or inline runtime): what it is doing, for the dashboard.
CREATE TABLE "queue_workers" (
    "id" TEXT NOT NULL,
    "host" TEXT NOT NULL,
    "pid" INTEGER NOT NULL,
    "queues" TEXT[] NOT NULL,
    "state" TEXT NOT NULL DEFAULT 'running',
    "started_at" TIMESTAMPTZ(6) NOT NULL DEFAULT now(),
    "seen_at" TIMESTAMPTZ(6) NOT NULL DEFAULT now(),
    "stopped_at" TIMESTAMPTZ(6),
    "claimed" BIGINT NOT NULL DEFAULT 0,
    "completed" BIGINT NOT NULL DEFAULT 0,
    "failed" BIGINT NOT NULL DEFAULT 0,
    "in_flight" INTEGER NOT NULL DEFAULT 0,
    "last_claim_at" TIMESTAMPTZ(6),
    "last_error" TEXT,
    "last_error_at" TIMESTAMPTZ(6),

    CONSTRAINT "queue_workers_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "queue_workers_state_check" CHECK ("state" IN ('running', 'draining', 'stopped'))
);

-- Every admin action (requeue, discard, archive), dry runs included: who, when, what, how many.
CREATE TABLE "admin_audit" (
    "id" BIGSERIAL NOT NULL,
    "at" TIMESTAMPTZ(6) NOT NULL DEFAULT now(),
    "actor" TEXT NOT NULL,
    "action" TEXT NOT NULL,
    "target" JSONB NOT NULL DEFAULT '{}',
    "dry_run" BOOLEAN NOT NULL DEFAULT false,
    "affected" INTEGER NOT NULL DEFAULT 0,
    "detail" JSONB,

    CONSTRAINT "admin_audit_pkey" PRIMARY KEY ("id")
);
CREATE INDEX "admin_audit_at_idx" ON "admin_audit"("at");
