-- AlterTable
ALTER TABLE "clients" ADD COLUMN     "require_pkce" BOOLEAN NOT NULL DEFAULT false;

-- AlterTable
ALTER TABLE "interactions" ADD COLUMN     "ip" TEXT,
ADD COLUMN     "login_hint" TEXT;

-- CreateTable
CREATE TABLE "allowed_origins" (
    "client_id" TEXT NOT NULL,
    "origin" TEXT NOT NULL,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "allowed_origins_pkey" PRIMARY KEY ("client_id","origin")
);

-- CreateTable
-- Counters need no crash safety: unlogged, a hit costs no WAL flush.
CREATE UNLOGGED TABLE "rate_limits" (
    "key" TEXT NOT NULL,
    "window" BIGINT NOT NULL,
    "hits" INTEGER NOT NULL,
    "previous_hits" INTEGER NOT NULL,
    "expires_at" TIMESTAMP(3) NOT NULL,

    CONSTRAINT "rate_limits_pkey" PRIMARY KEY ("key")
);

-- CreateIndex
CREATE INDEX "rate_limits_expires_at_idx" ON "rate_limits"("expires_at");

-- CreateIndex
CREATE INDEX "interactions_ip_expires_at_idx" ON "interactions"("ip", "expires_at");

-- AddForeignKey
ALTER TABLE "allowed_origins" ADD CONSTRAINT "allowed_origins_client_id_fkey" FOREIGN KEY ("client_id") REFERENCES "clients"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Caps on outstanding Flow A challenges per client and per address (lib/actions/generate-challenge.ts).
CREATE INDEX "challenges_pending_client_idx" ON "challenges"("client_id", "expires_at") WHERE "used_at" IS NULL;
CREATE INDEX "challenges_pending_address_idx" ON "challenges"("address", "expires_at") WHERE "used_at" IS NULL;
