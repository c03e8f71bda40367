import type { Connection } from "./connection";

/** What the sweep deletes: rows that ended before `cutoff`, sessions idle since `idleSince`, counters spent by `now`, audit events before `auditBefore`. */
export type SweepBounds = { now: Date; cutoff: Date; idleSince: Date; auditBefore: Date; challengesTotal: number };

/**
 * Housekeeping across the groups, in one transaction: expired single-use rows, token records and
 * sessions, spent rate-limit counters, DPoP proofs too old to be presented again, expired ENS profiles and old audit events. Refresh tokens go by family: a family's
 * rows are deleted once its last token ended before the cutoff. Unused challenges beyond the newest
 * `challengesTotal` go too. Returns how many rows were deleted.
 */
export async function sweep({ db }: Connection, { now, cutoff, idleSince, auditBefore, challengesTotal }: SweepBounds): Promise<number> {
  const where = { expiresAt: { lt: cutoff } };
  const [refreshTokens, unusedChallenges, ...deleted] = await db.$transaction([
    db.$executeRaw`
      DELETE FROM refresh_tokens t WHERE t.expires_at < ${cutoff}
      AND NOT EXISTS (SELECT 1 FROM refresh_tokens s WHERE s.family_id = t.family_id AND s.expires_at >= ${cutoff})`,
    // Trimmed here rather than counted on every insert, which would slow Flow A down: the bound
    // holds at each sweep.
    db.$executeRaw`
      DELETE FROM challenges WHERE used_at IS NULL AND expires_at <= (
        SELECT expires_at FROM challenges WHERE used_at IS NULL ORDER BY expires_at DESC OFFSET ${challengesTotal} LIMIT 1)`,
    db.challenge.deleteMany({ where }),
    db.interaction.deleteMany({ where }),
    db.pushedAuthorizationRequest.deleteMany({ where }),
    db.authorizationCode.deleteMany({ where }),
    db.deviceAuthorization.deleteMany({ where }),
    db.issuedToken.deleteMany({ where }),
    db.loginSession.deleteMany({ where: { OR: [where, { revokedAt: { lt: cutoff } }, { lastSeenAt: { lt: idleSince } }] } }),
    db.rateLimit.deleteMany({ where: { expiresAt: { lt: now } } }),
    db.dpopProof.deleteMany({ where: { expiresAt: { lt: now } } }),
    db.ensProfile.deleteMany({ where: { expiresAt: { lt: now } } }),
    db.auditEvent.deleteMany({ where: { at: { lt: auditBefore } } }),
  ]);
  return deleted.reduce((sum, { count }) => sum + count, refreshTokens + unusedChallenges);
}
