-- Vehicle access tokens (RFC 8693 token exchange): each additive, so the previous release runs on
-- this schema unchanged.

-- A client may exchange its access tokens for vehicle tokens only when an admin allowed it.
ALTER TABLE "clients" ADD COLUMN "token_exchange" BOOLEAN NOT NULL DEFAULT false;

-- Vehicle tokens are signed by a key set of their own, in a table of its own with signing_keys'
-- columns: the previous release reads every row of signing_keys as its own key, and would publish
-- and sign with a vehicle key there (a rolling upgrade runs both releases on this schema).
CREATE TABLE "vehicle_signing_keys" (
    "kid" TEXT NOT NULL,
    "alg" TEXT NOT NULL,
    "public_jwk" JSONB NOT NULL,
    "private_jwe" TEXT NOT NULL,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "activates_at" TIMESTAMP(3) NOT NULL,
    "revoked_at" TIMESTAMP(3),
    "revoked_by" TEXT,
    "unpublished_at" TIMESTAMP(3),
    CONSTRAINT "vehicle_signing_keys_pkey" PRIMARY KEY ("kid")
);
CREATE UNIQUE INDEX "vehicle_signing_keys_activates_at_key" ON "vehicle_signing_keys"("activates_at") WHERE "revoked_at" IS NULL;

-- A vehicle token's record: the vehicle (its asset DID), the privileges granted, the block the
-- chain was read at (a transfer in a later block does not end it), and the access token exchanged.
ALTER TABLE "issued_tokens" ADD COLUMN "vehicle" TEXT;
ALTER TABLE "issued_tokens" ADD COLUMN "vehicle_privileges" INTEGER[];
ALTER TABLE "issued_tokens" ADD COLUMN "chain_block" BIGINT;
ALTER TABLE "issued_tokens" ADD COLUMN "subject_jti" TEXT;
-- The signer key of the license that signed a Flow A token's challenge: an exchange needs it still enabled.
ALTER TABLE "issued_tokens" ADD COLUMN "signer" TEXT;
CREATE INDEX "issued_tokens_vehicle_idx" ON "issued_tokens"("vehicle", "issued_at") WHERE "vehicle" IS NOT NULL;
CREATE INDEX "issued_tokens_subject_jti_idx" ON "issued_tokens"("subject_jti") WHERE "subject_jti" IS NOT NULL;

-- Where the watcher of the vehicle contracts' events has got to, and which instance holds it (a lease).
CREATE TABLE "chain_cursors" (
    "name" TEXT NOT NULL,
    "block" BIGINT NOT NULL,
    "leased_by" TEXT,
    "lease_until" TIMESTAMP(3),
    CONSTRAINT "chain_cursors_pkey" PRIMARY KEY ("name")
);
