-- Security review, second round: dashboard sessions held server-side, tied to the login session
-- they were signed in with (so logout, revocation, blocking and deletion end them), and the login
-- session an authorization code was issued in.

-- AlterTable
ALTER TABLE "authorization_codes" ADD COLUMN "session_id" TEXT;

-- CreateTable
CREATE TABLE "admin_sessions" (
    "id_hash" TEXT NOT NULL,
    "account_id" TEXT NOT NULL,
    "login_session_id" TEXT NOT NULL,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expires_at" TIMESTAMP(3) NOT NULL,
    "revoked_at" TIMESTAMP(3),
    "ip" TEXT,
    "user_agent" TEXT,

    CONSTRAINT "admin_sessions_pkey" PRIMARY KEY ("id_hash")
);

-- CreateIndex
CREATE INDEX "admin_sessions_account_id_idx" ON "admin_sessions"("account_id");

-- CreateIndex
CREATE INDEX "admin_sessions_login_session_id_idx" ON "admin_sessions"("login_session_id");

-- CreateIndex
CREATE INDEX "admin_sessions_expires_at_idx" ON "admin_sessions"("expires_at");

-- AddForeignKey
ALTER TABLE "admin_sessions" ADD CONSTRAINT "admin_sessions_login_session_id_fkey" FOREIGN KEY ("login_session_id") REFERENCES "login_sessions"("id_hash") ON DELETE CASCADE ON UPDATE CASCADE;
