-- Caps on outstanding Flow A challenges that a stranger cannot fill for someone else
-- (lib/db/flow-a.ts insertChallenge). The caller's address (IPv6 by its /64) of each challenge,
-- counted by PENDING_CHALLENGES_PER_IP. Partial, so raw SQL.
ALTER TABLE "challenges" ADD COLUMN     "ip" TEXT;

CREATE INDEX "challenges_pending_ip_idx" ON "challenges"("ip", "expires_at") WHERE "used_at" IS NULL;
