-- DropIndex
DROP INDEX "signing_keys_activates_at_key";

-- AlterTable
ALTER TABLE "signing_keys" ADD COLUMN     "revoked_at" TIMESTAMP(3),
ADD COLUMN     "revoked_by" TEXT;

-- One key per activation time among unrevoked keys (lib/keys/keystore.ts): a revoked upcoming key
-- must not block the successor the schedule then creates for the same time. Partial, so raw SQL.
CREATE UNIQUE INDEX "signing_keys_activates_at_key" ON "signing_keys"("activates_at") WHERE "revoked_at" IS NULL;
