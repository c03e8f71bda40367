import type { Prisma } from "../db/generated/client";
import type { Connection, Database } from "./connection";

/** A logout token to deliver, as a delivery pass claims it: where to, and what the token says. */
export type LogoutRow = {
  id: bigint;
  clientId: string;
  /** The client's back-channel logout URI now; null when it was removed since (nothing to deliver). */
  uri: string | null;
  sessionId: string;
  accountId: string;
  connector: string;
  createdAt: Date;
  /** Attempts so far, this one included. */
  attempts: number;
};

/**
 * Queues a logout token for each client that redeemed a code in one of the login sessions `sessionIds`
 * and has a back-channel logout URI. Run in the transaction that ends them (`db` a transaction's):
 * the outbox row commits with the end of the session, or neither does.
 */
export async function queueLogouts(db: Database | Prisma.TransactionClient, sessionIds: string[], now: Date): Promise<number> {
  if (sessionIds.length === 0) return 0;
  const redeemed = await db.loginSessionClient.findMany({
    where: { sessionId: { in: sessionIds } },
    select: { clientId: true, session: { select: { idHash: true, accountId: true, connector: true } } },
  });
  const listening = await db.client.findMany({
    where: { id: { in: [...new Set(redeemed.map((r) => r.clientId))] }, backchannelLogoutUri: { not: null } },
    select: { id: true },
  });
  const listeners = new Set(listening.map((c) => c.id));
  const { count } = await db.backchannelLogout.createMany({
    data: redeemed
      .filter(({ clientId }) => listeners.has(clientId))
      .map(({ clientId, session }) => ({
        clientId,
        sessionId: session.idHash,
        accountId: session.accountId,
        connector: session.connector,
        createdAt: now,
        nextAttemptAt: now,
      })),
  });
  return count;
}

/** The back-channel logout outbox (its rows are written by queueLogouts, with the end of a session). */
export function logoutStatements({ db }: Connection) {
  return {
    /**
     * Claims up to `limit` due rows until `leaseUntil` and counts the attempt, in one statement (no
     * session state: it works through a transaction pooler). SKIP LOCKED lets instances claim side
     * by side; a row whose lease lapsed (its instance died mid-delivery) is due again.
     */
    claim(now: Date, leaseUntil: Date, limit: number): Promise<LogoutRow[]> {
      return db.$queryRaw<LogoutRow[]>`
        UPDATE backchannel_logouts b SET lease_until = ${leaseUntil}, attempts = b.attempts + 1
        FROM clients c
        WHERE c.id = b.client_id AND b.id IN (
          SELECT id FROM backchannel_logouts
          WHERE next_attempt_at <= ${now} AND (lease_until IS NULL OR lease_until <= ${now})
          ORDER BY next_attempt_at LIMIT ${limit} FOR UPDATE SKIP LOCKED)
        RETURNING b.id, b.client_id AS "clientId", c.backchannel_logout_uri AS uri, b.session_id AS "sessionId",
                  b.account_id AS "accountId", b.connector, b.created_at AS "createdAt", b.attempts`;
    },

    /** Removes a row: delivered, or given up. */
    async remove(id: bigint): Promise<void> {
      await db.backchannelLogout.deleteMany({ where: { id } });
    },

    /** Releases a row's claim until `nextAttemptAt`, noting why the attempt failed. */
    async retryAt(id: bigint, nextAttemptAt: Date, lastError: string): Promise<void> {
      await db.backchannelLogout.updateMany({ where: { id }, data: { nextAttemptAt, leaseUntil: null, lastError } });
    },

    /** Logout tokens not yet delivered nor given up. */
    pending(): Promise<number> {
      return db.backchannelLogout.count();
    },
  };
}
