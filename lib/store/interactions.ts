import type { Prisma } from "../db/generated/client";
import type { Connection } from "./connection";

/**
 * The hosted login's interactions (lib/interactions): one per login on Keyfob's pages, created by
 * /auth (or by entering a device's user code: ./device-authorizations.ts), completed once by a
 * login or a cancel.
 */
export function interactionStatements({ db }: Connection) {
  return {
    /** Unfinished logins of a caller, counted up to `cap`. */
    countPending(ip: string, cap: number, now: Date) {
      return db.interaction.count({ where: { ip, completedAt: null, expiresAt: { gt: now } }, take: cap });
    },

    create(data: Prisma.InteractionUncheckedCreateInput) {
      return db.interaction.create({ data });
    },

    async find(id: string) {
      return (await db.interaction.findUnique({ where: { id } })) ?? undefined;
    },

    /** An interaction with what the login page and its completion need of its client. */
    async findWithClient(id: string) {
      return (
        (await db.interaction.findUnique({
          where: { id },
          include: { client: { select: { name: true, logoUrl: true, enabled: true } } },
        })) ?? undefined
      );
    },

    /** Completes an unfinished, unexpired interaction (a login or a cancel), once: the row, or undefined when it was not. */
    async complete(id: string, now: Date, outcome: "login" | "cancelled") {
      const [interaction] = await db.interaction.updateManyAndReturn({
        where: { id, completedAt: null, expiresAt: { gt: now } },
        data: { completedAt: now, outcome },
      });
      return interaction;
    },
  };
}
