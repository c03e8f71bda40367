-- The device authorization grant (RFC 8628): a per-client opt-in, the device authorizations the
-- devices poll, and the interaction (hosted login) that approves one.
ALTER TABLE "clients" ADD COLUMN "device_flow" BOOLEAN NOT NULL DEFAULT false;

CREATE TABLE "device_authorizations" (
    "device_code_hash" TEXT NOT NULL,
    "user_code_hash" TEXT,
    "client_id" TEXT NOT NULL,
    "scope" TEXT NOT NULL,
    "poll_interval" INTEGER NOT NULL,
    "last_polled_at" TIMESTAMP(3),
    "status" TEXT NOT NULL DEFAULT 'pending',
    "account_id" TEXT,
    "connector" TEXT,
    "email" TEXT,
    "email_verified" BOOLEAN NOT NULL DEFAULT false,
    "auth_time" TIMESTAMP(3),
    "amr" TEXT,
    "expires_at" TIMESTAMP(3) NOT NULL,
    "used_at" TIMESTAMP(3),

    CONSTRAINT "device_authorizations_pkey" PRIMARY KEY ("device_code_hash")
);

CREATE UNIQUE INDEX "device_authorizations_user_code_hash_key" ON "device_authorizations"("user_code_hash");
CREATE INDEX "device_authorizations_expires_at_idx" ON "device_authorizations"("expires_at");
ALTER TABLE "device_authorizations" ADD CONSTRAINT "device_authorizations_client_id_fkey" FOREIGN KEY ("client_id") REFERENCES "clients"("id") ON DELETE CASCADE ON UPDATE CASCADE;

ALTER TABLE "interactions" ADD COLUMN "device_code_hash" TEXT;
CREATE UNIQUE INDEX "interactions_device_code_hash_key" ON "interactions"("device_code_hash");
