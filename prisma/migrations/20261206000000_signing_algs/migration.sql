-- Signing algorithms per client (FAPI 2.0: PS256, ES256): each additive, so the previous release
-- runs on this schema unchanged.

-- The alg a client's ID, access and logout tokens are signed with (RFC 7591 id_token_signed_response_alg).
ALTER TABLE "clients" ADD COLUMN "id_token_signed_response_alg" TEXT NOT NULL DEFAULT 'RS256'
    CONSTRAINT "clients_id_token_signed_response_alg_check" CHECK ("id_token_signed_response_alg" IN ('RS256', 'PS256', 'ES256'));

-- The access set's PS256 and ES256 keys, one schedule per alg, in a table of their own with
-- signing_keys' columns: the previous release reads every row of signing_keys as its own RS256 key
-- (a rolling upgrade runs both releases on this schema).
CREATE TABLE "alg_signing_keys" (
    "kid" TEXT NOT NULL,
    "alg" TEXT NOT NULL,
    "public_jwk" JSONB NOT NULL,
    "private_jwe" TEXT NOT NULL,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "activates_at" TIMESTAMP(3) NOT NULL,
    "revoked_at" TIMESTAMP(3),
    "revoked_by" TEXT,
    "unpublished_at" TIMESTAMP(3),
    CONSTRAINT "alg_signing_keys_pkey" PRIMARY KEY ("kid")
);
CREATE UNIQUE INDEX "alg_signing_keys_alg_activates_at_key" ON "alg_signing_keys"("alg", "activates_at") WHERE "revoked_at" IS NULL;
