import type { Connection } from "./connection";
import type { PushedRequestStore } from "./contract";

/** Pushed authorization requests (RFC 9126): a client's parameters, stored by /par and used once by /authorize. */
export function pushedRequestStatements({ db }: Connection): PushedRequestStore {
  return {
    async create(data) {
      await db.pushedAuthorizationRequest.create({ data });
    },

    /** One conditional update: only an unused row is changed, so one call of concurrent ones gets it. */
    async consume(requestHash, clientId, now) {
      const [row] = await db.pushedAuthorizationRequest.updateManyAndReturn({
        where: { requestHash, clientId, usedAt: null, expiresAt: { gt: now } },
        data: { usedAt: now },
        select: { parameters: true },
      });
      return row?.parameters;
    },
  };
}
