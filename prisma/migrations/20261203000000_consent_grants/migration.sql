-- Consent for third-party clients (lib/consent): a client setting that is off for every existing
-- client (first-party, no consent step), the grants per account and client, and the login session
-- an interaction awaiting consent belongs to. Additive, so the previous release runs on it unchanged.
ALTER TABLE "clients" ADD COLUMN "require_consent" BOOLEAN NOT NULL DEFAULT false;
ALTER TABLE "interactions" ADD COLUMN "consent_session" TEXT;

CREATE TABLE "consent_grants" (
    "account_id" TEXT NOT NULL,
    "client_id" TEXT NOT NULL,
    "scope" TEXT NOT NULL,
    "granted_at" TIMESTAMP(3) NOT NULL,
    CONSTRAINT "consent_grants_pkey" PRIMARY KEY ("account_id","client_id")
);
CREATE INDEX "consent_grants_client_id_idx" ON "consent_grants"("client_id");
ALTER TABLE "consent_grants" ADD CONSTRAINT "consent_grants_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;
ALTER TABLE "consent_grants" ADD CONSTRAINT "consent_grants_client_id_fkey" FOREIGN KEY ("client_id") REFERENCES "clients"("id") ON DELETE CASCADE ON UPDATE CASCADE;
