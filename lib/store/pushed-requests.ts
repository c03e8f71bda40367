import type { Prisma } from "../db/generated/client";
import type { Connection } from "./connection";

/** Pushed authorization requests (RFC 9126): a client's parameters, stored by /par and used once by /authorize. */
export function pushedRequestStatements({ db }: Connection) {
  return {
    async create(data: Prisma.PushedAuthorizationRequestUncheckedCreateInput): Promise<void> {
      await db.pushedAuthorizationRequest.create({ data });
    },

    /** Uses up a client's unused, unexpired pushed request: its parameters, or undefined when there was none. */
    async consume(requestHash: string, clientId: string, now: Date): Promise<string | undefined> {
      const [row] = await db.pushedAuthorizationRequest.updateManyAndReturn({
        where: { requestHash, clientId, usedAt: null, expiresAt: { gt: now } },
        data: { usedAt: now },
        select: { parameters: true },
      });
      return row?.parameters;
    },
  };
}
