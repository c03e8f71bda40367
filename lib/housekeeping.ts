import type { Config } from "./config";
import type { Database } from "./db/client";
import { log } from "./log";

/** Expired single-use rows are kept a day, so a late replay still gets "already used" rather than "unknown". */
const RETENTION_MS = 24 * 3600_000;
export const SWEEP_INTERVAL_MS = 10 * 60_000;

/**
 * What the sweep needs: how long audit events are kept, how many unused challenges, and when an
 * idle login session has ended.
 */
export type SweepSettings = Pick<Config, "auditRetention" | "pendingCaps" | "sessionIdleTtl">;

/**
 * Deletes challenges, interactions, codes and token records that expired more than a day ago, login
 * sessions that ended more than a day ago (expired, revoked, or idle past SESSION_IDLE_TTL: only
 * live ones are shown or used, and the audit log keeps sign-ins and revocations), spent rate-limit
 * counters, and audit events older than the retention (AUDIT_RETENTION, in seconds).
 * Refresh tokens go by family: a family's rows, used ones included, are kept until its last token
 * expired more than a day ago, so that a used token replayed while its family lives is still
 * recognised as reuse. Unused challenges beyond the newest PENDING_CHALLENGES_TOTAL go too: the
 * per-caller cap bounds each caller, this bounds how many callers together can leave.
 */
export async function sweepExpired(db: Database, { auditRetention, pendingCaps, sessionIdleTtl }: SweepSettings, now = new Date()): Promise<number> {
  const cutoff = new Date(now.getTime() - RETENTION_MS);
  const where = { expiresAt: { lt: cutoff } };
  const [refreshTokens, unusedChallenges, ...deleted] = await db.$transaction([
    db.$executeRaw`
      DELETE FROM refresh_tokens t WHERE t.expires_at < ${cutoff}
      AND NOT EXISTS (SELECT 1 FROM refresh_tokens s WHERE s.family_id = t.family_id AND s.expires_at >= ${cutoff})`,
    // Trimmed here rather than counted on every insert, which would slow Flow A down: the bound
    // holds at each sweep.
    db.$executeRaw`
      DELETE FROM challenges WHERE used_at IS NULL AND expires_at <= (
        SELECT expires_at FROM challenges WHERE used_at IS NULL ORDER BY expires_at DESC OFFSET ${pendingCaps.challengesTotal} LIMIT 1)`,
    db.challenge.deleteMany({ where }),
    db.interaction.deleteMany({ where }),
    db.authorizationCode.deleteMany({ where }),
    db.issuedToken.deleteMany({ where }),
    db.loginSession.deleteMany({
      where: { OR: [where, { revokedAt: { lt: cutoff } }, { lastSeenAt: { lt: new Date(cutoff.getTime() - sessionIdleTtl * 1000) } }] },
    }),
    db.rateLimit.deleteMany({ where: { expiresAt: { lt: now } } }),
    db.auditEvent.deleteMany({ where: { at: { lt: new Date(now.getTime() - auditRetention * 1000) } } }),
  ]);
  return deleted.reduce((sum, { count }) => sum + count, refreshTokens + unusedChallenges);
}

/** Sweeps every SWEEP_INTERVAL_MS for as long as the process runs; each instance may do it, deletes are idempotent. */
export function scheduleSweeps(db: Database, settings: SweepSettings): void {
  setInterval(() => {
    sweepExpired(db, settings).catch((error) => log.error("sweep of expired rows failed", { error: String(error) }));
  }, SWEEP_INTERVAL_MS).unref();
}
