import type { Connection } from "./connection";
import type { PasskeyChallengeStore } from "./contract";

/** Passkey (WebAuthn) challenges: issued for a registration, a login or an added passkey, each answered once. */
export function passkeyChallengeStatements({ db }: Connection): PasskeyChallengeStore {
  return {
    async create(data, sweepBefore) {
      await db.passkeyChallenge.deleteMany({ where: { expiresAt: { lt: sweepBefore } } });
      await db.passkeyChallenge.create({ data });
    },

    /** One conditional update: only an unused row is changed, so the first answer of two gets it. */
    async consume(challengeHash, purpose, binding, now) {
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
