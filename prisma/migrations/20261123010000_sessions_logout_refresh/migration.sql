-- Issue 8: introspection by resource servers only, and no unused account keys (Google/Apple
-- accounts had a generated private key that nothing used). Issue 9: login sessions,
-- RP-initiated logout, refresh tokens, auth_time and amr. (No semicolons in comments: the
-- migration runner splits statements on them.)

-- AlterTable
ALTER TABLE "clients" ADD COLUMN     "refresh_tokens_allowed" BOOLEAN NOT NULL DEFAULT false,
ADD COLUMN     "resource_server" BOOLEAN NOT NULL DEFAULT false;

-- AlterTable
ALTER TABLE "accounts" DROP COLUMN "key_jwe";

-- AlterTable
ALTER TABLE "interactions" ADD COLUMN     "hint_account" TEXT,
ADD COLUMN     "max_age" INTEGER;

-- AlterTable
ALTER TABLE "authorization_codes" ADD COLUMN     "amr" TEXT,
ADD COLUMN     "auth_time" TIMESTAMP(3);

-- AlterTable
ALTER TABLE "issued_tokens" ADD COLUMN     "refresh_family" TEXT;

-- CreateTable
CREATE TABLE "post_logout_redirect_uris" (
    "client_id" TEXT NOT NULL,
    "uri" TEXT NOT NULL,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "post_logout_redirect_uris_pkey" PRIMARY KEY ("client_id","uri")
);

-- CreateTable
CREATE TABLE "login_sessions" (
    "id_hash" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "connector" TEXT NOT NULL,
    "subject" TEXT NOT NULL,
    "email" TEXT,
    "email_verified" BOOLEAN NOT NULL DEFAULT false,
    "amr" TEXT NOT NULL,
    "auth_time" TIMESTAMP(3) NOT NULL,
    "last_seen_at" TIMESTAMP(3) NOT NULL,
    "expires_at" TIMESTAMP(3) NOT NULL,
    "revoked_at" TIMESTAMP(3),
    "ip" TEXT,
    "user_agent" TEXT,

    CONSTRAINT "login_sessions_pkey" PRIMARY KEY ("id_hash")
);

-- CreateTable
CREATE TABLE "refresh_tokens" (
    "token_hash" TEXT NOT NULL,
    "family_id" TEXT NOT NULL,
    "client_id" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "connector" TEXT NOT NULL,
    "scope" TEXT NOT NULL,
    "email" TEXT,
    "email_verified" BOOLEAN NOT NULL DEFAULT false,
    "auth_time" TIMESTAMP(3) NOT NULL,
    "amr" TEXT NOT NULL,
    "issued_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expires_at" TIMESTAMP(3) NOT NULL,
    "family_expires_at" TIMESTAMP(3) NOT NULL,
    "used_at" TIMESTAMP(3),
    "revoked_at" TIMESTAMP(3),

    CONSTRAINT "refresh_tokens_pkey" PRIMARY KEY ("token_hash")
);

-- CreateIndex
CREATE INDEX "login_sessions_account_id_last_seen_at_idx" ON "login_sessions"("account_id", "last_seen_at");

-- CreateIndex
CREATE INDEX "login_sessions_expires_at_idx" ON "login_sessions"("expires_at");

-- CreateIndex
CREATE INDEX "refresh_tokens_family_id_idx" ON "refresh_tokens"("family_id");

-- CreateIndex
CREATE INDEX "refresh_tokens_account_id_issued_at_idx" ON "refresh_tokens"("account_id", "issued_at");

-- CreateIndex
CREATE INDEX "refresh_tokens_client_id_issued_at_idx" ON "refresh_tokens"("client_id", "issued_at");

-- CreateIndex
CREATE INDEX "refresh_tokens_family_expires_at_idx" ON "refresh_tokens"("family_expires_at");

-- CreateIndex
CREATE INDEX "issued_tokens_refresh_family_idx" ON "issued_tokens"("refresh_family");

-- AddForeignKey
ALTER TABLE "post_logout_redirect_uris" ADD CONSTRAINT "post_logout_redirect_uris_client_id_fkey" FOREIGN KEY ("client_id") REFERENCES "clients"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "login_sessions" ADD CONSTRAINT "login_sessions_account_id_fkey" FOREIGN KEY ("account_id") REFERENCES "accounts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "refresh_tokens" ADD CONSTRAINT "refresh_tokens_client_id_fkey" FOREIGN KEY ("client_id") REFERENCES "clients"("id") ON DELETE CASCADE ON UPDATE CASCADE;

