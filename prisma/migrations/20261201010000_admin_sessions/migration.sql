-- Admin sessions (docs/decisions/009): one row holding what every wirewatch process needs to
-- accept or refuse an admin's session cookie.
CREATE TABLE "admin_state" (
    "id" INTEGER NOT NULL DEFAULT 1,
    -- Sealed into every session cookie; a cookie with another version is refused. Logout and a
    -- change of ADMIN_PASSWORD add one, which ends every session at once.
    "session_version" INTEGER NOT NULL DEFAULT 1,
    -- The key cookies are sealed with: random, made at first use, never leaves the database.
    "cookie_secret" TEXT NOT NULL,
    -- scrypt of the ADMIN_PASSWORD the current sessions were opened under (null: none set), so
    -- a process that starts with another password notices the change.
    "password_fingerprint" TEXT,
    "updated_at" TIMESTAMPTZ(6) NOT NULL DEFAULT now(),

    CONSTRAINT "admin_state_pkey" PRIMARY KEY ("id"),
    CONSTRAINT "admin_state_single_row" CHECK ("id" = 1),
    CONSTRAINT "admin_state_secret_check" CHECK (length("cookie_secret") >= 32)
);
