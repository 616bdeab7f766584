-- WebSub (W3C recommendation, issue 17 part 4): a feed that advertises a hub is pushed to, with
-- polling kept as the safety net at a slower rate. One row per feed source that was looked at,
-- hub or not, so a feed without a hub is not re-fetched for discovery more than once a day.
--
-- No foreign key to sources on purpose: a source that is removed must still be unsubscribed from
-- its hub, and the row holds the hub, topic and callback token that needs (workers/websub).
CREATE TABLE "websub_subscriptions" (
    "source_id" TEXT NOT NULL,
    -- 'no_hub' (discovery found none) | 'pending' (asked, not verified yet) | 'active' |
    -- 'denied' (the hub said no) | 'failed' (the hub request or verification failed) |
    -- 'unsubscribing' | 'unsubscribed'.
    "state" TEXT NOT NULL,
    -- The mode the hub may verify now ('subscribe' | 'unsubscribe'); null when nothing is asked.
    -- Intent verification echoes the challenge only when hub.mode equals it and the topic matches.
    "pending_mode" TEXT,
    "hub" TEXT,
    "topic" TEXT,
    -- The callback's unguessable path segment (32 random bytes, base64url): the only thing that
    -- routes a request to this row. Unique so a guess cannot reach two rows.
    "token" TEXT,
    -- hub.secret: the HMAC key of X-Hub-Signature on every push.
    "secret" TEXT,
    "lease_seconds" INTEGER,
    "requested_at" TIMESTAMPTZ(6),
    "verified_at" TIMESTAMPTZ(6),
    "expires_at" TIMESTAMPTZ(6),
    -- 80 % into the lease: a renewal that fails still leaves a fifth of the lease to retry in.
    "renew_at" TIMESTAMPTZ(6),
    -- When discovery last looked at the feed for a hub.
    "checked_at" TIMESTAMPTZ(6),
    "pushes" BIGINT NOT NULL DEFAULT 0,
    "last_push_at" TIMESTAMPTZ(6),
    -- Pushes refused (missing or bad signature, unreadable body): counted, never written.
    "rejected_pushes" BIGINT NOT NULL DEFAULT 0,
    "last_rejected_at" TIMESTAMPTZ(6),
    "last_rejection" TEXT,
    "last_error" TEXT,
    "created_at" TIMESTAMPTZ(6) NOT NULL DEFAULT now(),
    "updated_at" TIMESTAMPTZ(6) NOT NULL DEFAULT now(),
    CONSTRAINT "websub_subscriptions_pkey" PRIMARY KEY ("source_id")
);
CREATE UNIQUE INDEX "websub_subscriptions_token_key" ON "websub_subscriptions"("token");
-- The maintainer's question: which leases are due for renewal.
CREATE INDEX "websub_subscriptions_renew_idx" ON "websub_subscriptions"("renew_at") WHERE "state" = 'active';
