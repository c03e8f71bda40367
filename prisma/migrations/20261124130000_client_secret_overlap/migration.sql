-- Client secret rotation with an overlap (as Keycloak's secret rotation policy): the secret a
-- rotation replaced stays valid until previous_secret_expires_at, or until an admin ends it early.

-- AlterTable
ALTER TABLE "clients" ADD COLUMN "previous_secret_hash" TEXT,
ADD COLUMN "previous_secret_expires_at" TIMESTAMP(3);
