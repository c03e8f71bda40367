import type { Prisma } from "../db/generated/client";
import type { Connection } from "./connection";

/** Passkey (WebAuthn) challenges: issued for a registration, a login or an added passkey, each answered once. */
export function passkeyChallengeStatements({ db }: Connection) {
  return {
    /** Stores a passkey challenge, sweeping those that expired before `sweepBefore` on the way. */
    async create(data: Prisma.PasskeyChallengeUncheckedCreateInput, sweepBefore: Date): Promise<void> {
      await db.passkeyChallenge.deleteMany({ where: { expiresAt: { lt: sweepBefore } } });
      await db.passkeyChallenge.create({ data });
    },

    /**
     * Uses up a passkey challenge issued for `purpose` and, when given, this login or account, unused
     * and unexpired: one conditional update, so of two answers to one challenge only the first gets the row.
     */
    async consume(challengeHash: string, purpose: string, binding: { interactionId?: string; accountId?: string }, now: Date) {
      const [row] = await db.passkeyChallenge.updateManyAndReturn({
        where: {
          challengeHash,
          purpose,
          ...(binding.interactionId !== undefined && { interactionId: binding.interactionId }),
          ...(binding.accountId !== undefined && { accountId: binding.accountId }),
          usedAt: null,
          expiresAt: { gt: now },
        },
        data: { usedAt: now },
      });
      return row;
    },
  };
}
