-- One-time set-up links for the first admin (lib/admin/first-admin.ts): a new table, so the
-- previous release runs on this schema unchanged.
CREATE TABLE "admin_setup_codes" (
    "code_hash" TEXT NOT NULL,
    "created_at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expires_at" TIMESTAMP(3) NOT NULL,
    "used_at" TIMESTAMP(3),
    "used_by" TEXT,
    CONSTRAINT "admin_setup_codes_pkey" PRIMARY KEY ("code_hash")
);
CREATE INDEX "admin_setup_codes_expires_at_idx" ON "admin_setup_codes"("expires_at");
