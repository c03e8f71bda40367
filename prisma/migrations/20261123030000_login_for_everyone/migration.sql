-- Hosted login for everyone: the login page's language, and passkeys (lib/passkeys).

-- The authorization request's ui_locales, stored with the interaction (the login page's language).
ALTER TABLE "interactions" ADD COLUMN     "ui_locales" TEXT;

-- A passkey (WebAuthn credential) of an account, by its credential ID.
CREATE TABLE "passkey_credentials" (
    "id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "user_handle" TEXT NOT NULL,
    "public_key" BYTEA NOT NULL,
    "counter" BIGINT NOT NULL DEFAULT 0,
    "transports" TEXT[],
    "device_type" TEXT NOT NULL,
    "backed_up" BOOLEAN NOT NULL DEFAULT false,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "last_used_at" TIMESTAMP(3),

    CONSTRAINT "passkey_credentials_pkey" PRIMARY KEY ("id")
);

-- A WebAuthn challenge by its SHA-256 (single use, short lived).
CREATE TABLE "passkey_challenges" (
    "challenge_hash" TEXT NOT NULL,
    "purpose" TEXT NOT NULL,
    "interaction_id" TEXT,
    "account_id" TEXT,
    "user_handle" TEXT,
    "expires_at" TIMESTAMP(3) NOT NULL,
    "used_at" TIMESTAMP(3),

    CONSTRAINT "passkey_challenges_pkey" PRIMARY KEY ("challenge_hash")
);

CREATE INDEX "passkey_credentials_account_id_idx" ON "passkey_credentials"("account_id");

CREATE INDEX "passkey_credentials_user_handle_idx" ON "passkey_credentials"("user_handle");

CREATE INDEX "passkey_challenges_expires_at_idx" ON "passkey_challenges"("expires_at");

ALTER TABLE "passkey_credentials" ADD CONSTRAINT "passkey_credentials_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;
