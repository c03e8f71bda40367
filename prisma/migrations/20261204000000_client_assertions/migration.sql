-- Client assertions (RFC 7523, OIDC Core 9: private_key_jwt, client_secret_jwt): a client's method and its keys, and
-- the assertions seen, so that every instance refuses a replayed jti.
ALTER TABLE "clients" ADD COLUMN "token_endpoint_auth_method" TEXT;
ALTER TABLE "clients" ADD COLUMN "jwks" JSONB;
ALTER TABLE "clients" ADD COLUMN "jwks_uri" TEXT;
-- client_secret_jwt: the secret encrypted under KEYFOB_SECRET (docs/decisions/2026-11-28-client-secret-jwt-secret-sealed.md).
ALTER TABLE "clients" ADD COLUMN "secret_sealed" TEXT;

CREATE TABLE "client_assertions" (
    "jti_hash" TEXT NOT NULL,
    "expires_at" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "client_assertions_pkey" PRIMARY KEY ("jti_hash")
);

CREATE INDEX "client_assertions_expires_at_idx" ON "client_assertions"("expires_at");
