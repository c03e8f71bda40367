import { Prisma } from "../db/generated/client";
import type { Connection } from "./connection";
import type { SweepBounds } from "./contract";
import { deleteSessions } from "./logouts";

/** Housekeeping across the groups (Store.sweep): one interactive transaction, a statement per table. */
export async function sweep({ db }: Connection, { now, cutoff, idleSince, auditBefore, challengesTotal }: SweepBounds): Promise<number> {
  const where = { expiresAt: { lt: cutoff } };
  return db.$transaction(async (tx) => {
    // A sweep after a long pause may delete many rows: its statements may take as long as it may.
    await tx.$executeRawUnsafe(`SET LOCAL statement_timeout = ${SWEEP_TRANSACTION.timeout}`);
    const counts = [
      await tx.$executeRaw`
        DELETE FROM refresh_tokens t WHERE t.expires_at < ${cutoff}
        AND NOT EXISTS (SELECT 1 FROM refresh_tokens s WHERE s.family_id = t.family_id AND s.expires_at >= ${cutoff})`,
      // Trimmed here rather than counted on every insert, which would slow Flow A down: the bound
      // holds at each sweep. Fairly: each caller's newest come first (rank 1 of every caller, then
      // rank 2...), so beyond the bound the callers holding the most lose their oldest, and a flood
      // from a few addresses trims only its own.
      await tx.$executeRaw`
        DELETE FROM challenges WHERE state_hash IN (
          SELECT state_hash FROM (
            SELECT state_hash, expires_at, row_number() OVER (PARTITION BY ip ORDER BY expires_at DESC) AS rank
            FROM challenges WHERE used_at IS NULL) ranked
          ORDER BY rank, expires_at DESC OFFSET ${challengesTotal})`,
      await deleteSessions(tx, Prisma.sql`expires_at < ${cutoff} OR revoked_at < ${cutoff} OR last_seen_at < ${idleSince}`),
    ];
    for (const deleted of [
      tx.challenge.deleteMany({ where }),
      tx.interaction.deleteMany({ where }),
      tx.pushedAuthorizationRequest.deleteMany({ where }),
      tx.authorizationCode.deleteMany({ where }),
      tx.deviceAuthorization.deleteMany({ where }),
      tx.issuedToken.deleteMany({ where }),
      // Used or not: the first admin's role records how it was granted.
      tx.adminSetupCode.deleteMany({ where }),
      tx.rateLimit.deleteMany({ where: { expiresAt: { lt: now } } }),
      tx.dpopProof.deleteMany({ where: { expiresAt: { lt: now } } }),
      tx.clientAssertion.deleteMany({ where: { expiresAt: { lt: now } } }),
      tx.ensProfile.deleteMany({ where: { expiresAt: { lt: now } } }),
      tx.auditEvent.deleteMany({ where: { at: { lt: auditBefore } } }),
    ])
      counts.push((await deleted).count);
    return counts.reduce((sum, count) => sum + count, 0);
  }, SWEEP_TRANSACTION);
}

/** A sweep after a long pause deletes many rows: more than the 5 seconds Prisma gives a transaction by default. */
const SWEEP_TRANSACTION = { maxWait: 10_000, timeout: 120_000 };
