-- Signing keys stay as history: a retired key whose tokens have all expired is no longer deleted
-- but marked unpublished (its private half erased), so the dashboard lists it with revoked keys.

-- AlterTable
ALTER TABLE "signing_keys" ADD COLUMN "unpublished_at" TIMESTAMP(3);
