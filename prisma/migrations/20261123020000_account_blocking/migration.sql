-- An admin can block an account (lib/accounts/blocking.ts).
ALTER TABLE "accounts" ADD COLUMN     "blocked_at" TIMESTAMP(3);
