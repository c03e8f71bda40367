-- Account self-service (issue 20): a person names their passkeys at /account, as password managers
-- and Clerk's profile do; unnamed passkeys are shown by when they were added.

-- AlterTable
ALTER TABLE "passkey_credentials" ADD COLUMN "name" TEXT;
