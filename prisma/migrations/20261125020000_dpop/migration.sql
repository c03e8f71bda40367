-- DPoP (RFC 9449): clients that must use it, refresh-token families bound to a key, and the proofs
-- seen, so that every instance refuses a replayed one.
ALTER TABLE "clients" ADD COLUMN "dpop_bound_access_tokens" BOOLEAN NOT NULL DEFAULT false;

ALTER TABLE "refresh_tokens" ADD COLUMN "dpop_jkt" TEXT;

CREATE TABLE "dpop_proofs" (
    "proof_hash" TEXT NOT NULL,
    "expires_at" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "dpop_proofs_pkey" PRIMARY KEY ("proof_hash")
);

CREATE INDEX "dpop_proofs_expires_at_idx" ON "dpop_proofs"("expires_at");
