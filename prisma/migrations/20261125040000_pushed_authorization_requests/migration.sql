-- Pushed authorization requests (RFC 9126): the requests themselves, single use and short-lived,
-- and the per-client setting that makes them the only way to start an authorization.

-- AlterTable
ALTER TABLE "clients" ADD COLUMN "require_pushed_authorization_requests" BOOLEAN NOT NULL DEFAULT false;

-- CreateTable
CREATE TABLE "pushed_authorization_requests" (
    "request_hash" TEXT NOT NULL,
    "client_id" TEXT NOT NULL,
    "parameters" TEXT NOT NULL,
    "expires_at" TIMESTAMP(3) NOT NULL,
    "used_at" TIMESTAMP(3),

    CONSTRAINT "pushed_authorization_requests_pkey" PRIMARY KEY ("request_hash")
);

-- CreateIndex
CREATE INDEX "pushed_authorization_requests_expires_at_idx" ON "pushed_authorization_requests"("expires_at");

-- AddForeignKey
ALTER TABLE "pushed_authorization_requests" ADD CONSTRAINT "pushed_authorization_requests_client_id_fkey" FOREIGN KEY ("client_id") REFERENCES "clients"("id") ON DELETE CASCADE ON UPDATE CASCADE;
