import type { Prisma } from "../db/generated/client";
import type { Connection, Database } from "./connection";
import type { LogoutRow, LogoutStore } from "./contract";

/**
 * Queues a logout token for each client that redeemed a code in one of the login sessions `sessionIds`
 * and has a back-channel logout URI, in one statement. Run in the transaction that ends them (`db` a
 * transaction's): the outbox row commits with the end of the session, or neither does.
 */
export async function queueLogouts(db: Database | Prisma.TransactionClient, sessionIds: string[], now: Date): Promise<number> {
  if (sessionIds.length === 0) return 0;
  return db.$executeRaw`
    INSERT INTO backchannel_logouts (client_id, session_id, account_id, connector, created_at, next_attempt_at)
    SELECT l.client_id, s.id_hash, s.account_id, s.connector, ${now}, ${now}
    FROM login_session_clients l JOIN login_sessions s ON s.id_hash = l.session_id JOIN clients c ON c.id = l.client_id
    WHERE l.session_id = ANY (${sessionIds}) AND c.backchannel_logout_uri IS NOT NULL`;
}

/**
 * Deletes login sessions and the clients recorded in them, in `tx`: the links are deleted by a
 * statement after the sessions', so that it sees those a code exchange recorded while it waited
 * for a session's lock (they have no foreign key, migration 20261129000000). How many sessions went.
 */
export async function deleteSessions(tx: Prisma.TransactionClient, where: Prisma.Sql): Promise<number> {
  const deleted = await tx.$queryRaw<{ id_hash: string }[]>`DELETE FROM login_sessions WHERE ${where} RETURNING id_hash`;
  if (deleted.length > 0) await tx.$executeRaw`DELETE FROM login_session_clients WHERE session_id = ANY (${deleted.map((s) => s.id_hash)})`;
  return deleted.length;
}

/** The back-channel logout outbox (its rows are written by queueLogouts, with the end of a session). */
export function logoutStatements({ db }: Connection): LogoutStore {
  return {
    /** FOR UPDATE SKIP LOCKED lets instances claim side by side. */
    claim(now, leaseUntil, limit) {
      return db.$queryRaw<LogoutRow[]>`
        UPDATE backchannel_logouts b SET lease_until = ${leaseUntil}, attempts = b.attempts + 1
        FROM clients c
        WHERE c.id = b.client_id AND b.id IN (
          SELECT id FROM backchannel_logouts
          WHERE next_attempt_at <= ${now} AND (lease_until IS NULL OR lease_until <= ${now})
          ORDER BY next_attempt_at LIMIT ${limit} FOR UPDATE SKIP LOCKED)
        RETURNING b.id, b.client_id AS "clientId", c.backchannel_logout_uri AS uri, b.session_id AS "sessionId",
                  b.account_id AS "accountId", b.connector, b.created_at AS "createdAt", b.attempts,
                  c.id_token_signed_response_alg AS "signingAlg"`;
    },

    async remove(id) {
      await db.backchannelLogout.deleteMany({ where: { id } });
    },

    async retryAt(id, nextAttemptAt, lastError) {
      await db.backchannelLogout.updateMany({ where: { id }, data: { nextAttemptAt, leaseUntil: null, lastError } });
    },

    pending() {
      return db.backchannelLogout.count();
    },
  };
}
