import type { Connection } from "./connection";
import type { InteractionStore } from "./contract";

/**
 * The hosted login's interactions (lib/interactions): one per login on Keyfob's pages, created by
 * /auth (or by entering a device's user code: ./device-authorizations.ts), completed once by a
 * login or a cancel.
 */
export function interactionStatements({ db }: Connection): InteractionStore {
  return {
    countPending(ip, cap, now) {
      return db.interaction.count({ where: { ip, completedAt: null, expiresAt: { gt: now } }, take: cap });
    },

    create(data) {
      return db.interaction.create({ data });
    },

    async find(id) {
      return (await db.interaction.findUnique({ where: { id } })) ?? undefined;
    },

    async findWithClient(id) {
      return (
        (await db.interaction.findUnique({
          where: { id },
          include: { client: { select: { name: true, logoUrl: true, enabled: true, requireConsent: true, refreshTokensAllowed: true } } },
        })) ?? undefined
      );
    },

    /** One conditional update: only an unfinished row is changed, so one call of concurrent ones gets it. */
    async complete(id, now, outcome) {
      const [interaction] = await db.interaction.updateManyAndReturn({
        where: { id, completedAt: null, expiresAt: { gt: now } },
        data: { completedAt: now, outcome },
      });
      return interaction;
    },

    async awaitConsent(id, sessionId) {
      const { count } = await db.interaction.updateMany({
        where: { id, outcome: "consent", consentSession: null },
        data: { consentSession: sessionId },
      });
      return count === 1;
    },

    /** One conditional update, as complete's: of concurrent decisions one gets it. */
    async decideConsent(id, sessionId, now, outcome) {
      const [interaction] = await db.interaction.updateManyAndReturn({
        where: { id, outcome: "consent", consentSession: sessionId, expiresAt: { gt: now } },
        data: { completedAt: now, outcome },
      });
      return interaction;
    },
  };
}
