-- OpenID Connect Back-Channel Logout 1.0: a client's logout URI, which clients got tokens in each
-- login session, and the outbox of logout tokens still to deliver.

-- AlterTable
ALTER TABLE "clients" ADD COLUMN "backchannel_logout_uri" TEXT,
ADD COLUMN "backchannel_logout_session_required" BOOLEAN NOT NULL DEFAULT false;

-- CreateTable
CREATE TABLE "login_session_clients" (
    "session_id" TEXT NOT NULL,
    "client_id" TEXT NOT NULL,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "login_session_clients_pkey" PRIMARY KEY ("session_id","client_id")
);

-- CreateTable
CREATE TABLE "backchannel_logouts" (
    "id" BIGSERIAL NOT NULL,
    "client_id" TEXT NOT NULL,
    "session_id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "connector" TEXT NOT NULL,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "next_attempt_at" TIMESTAMP(3) NOT NULL,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "lease_until" TIMESTAMP(3),
    "last_error" TEXT,

    CONSTRAINT "backchannel_logouts_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "login_session_clients_client_id_idx" ON "login_session_clients"("client_id");

-- CreateIndex
CREATE INDEX "backchannel_logouts_next_attempt_at_idx" ON "backchannel_logouts"("next_attempt_at");

-- AddForeignKey
ALTER TABLE "login_session_clients" ADD CONSTRAINT "login_session_clients_session_id_fkey" FOREIGN KEY ("session_id") REFERENCES "login_sessions"("id_hash") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "login_session_clients" ADD CONSTRAINT "login_session_clients_client_id_fkey" FOREIGN KEY ("client_id") REFERENCES "clients"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "backchannel_logouts" ADD CONSTRAINT "backchannel_logouts_client_id_fkey" FOREIGN KEY ("client_id") REFERENCES "clients"("id") ON DELETE CASCADE ON UPDATE CASCADE;
