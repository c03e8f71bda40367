import type { Config } from "./config";
import type { Keyfob } from "./keyfob";
import { log } from "./log";
import type { Store } from "./store";

/** Expired single-use rows are kept a day, so a late replay still gets "already used" rather than "unknown". */
const RETENTION_MS = 24 * 3600_000;

/**
 * What the sweep needs: how long audit events are kept, how many unused challenges, and when an
 * idle login session has ended.
 */
export type SweepSettings = Pick<Config, "auditRetention" | "pendingCaps" | "sessionIdleTtl">;

/**
 * Ends the login sessions that ran out (their clients told by back-channel logout), then deletes
 * challenges, interactions, codes and token records that expired more than a day ago, login
 * sessions that ended more than a day ago (expired, revoked, or idle past SESSION_IDLE_TTL: only
 * live ones are shown or used, and the audit log keeps sign-ins and revocations), spent rate-limit
 * counters, DPoP proofs past the age at which they are refused anyway, and audit events older than the retention (AUDIT_RETENTION, in seconds).
 * Refresh tokens go by family: a family's rows, used ones included, are kept until its last token
 * expired more than a day ago, so that a used token replayed while its family lives is still
 * recognised as reuse. Unused challenges beyond the newest PENDING_CHALLENGES_TOTAL go too: the
 * per-caller cap bounds each caller, this bounds how many callers together can leave.
 */
export async function sweepExpired(
  store: Store,
  { auditRetention, pendingCaps, sessionIdleTtl }: SweepSettings,
  now: Date,
): Promise<number> {
  // Sessions that ran out (idle or past their maximum age) end first, their back-channel logouts
  // queued, as a logout's are: nothing else marks such an end, and the sweep then deletes them.
  await store.accounts.endRunOutSessions(now, new Date(now.getTime() - sessionIdleTtl * 1000));
  const cutoff = new Date(now.getTime() - RETENTION_MS);
  return store.sweep({
    now,
    cutoff,
    idleSince: new Date(cutoff.getTime() - sessionIdleTtl * 1000),
    auditBefore: new Date(now.getTime() - auditRetention * 1000),
    challengesTotal: pendingCaps.challengesTotal,
  });
}

/**
 * Sweeps every SWEEP_INTERVAL for as long as the process runs, one sweep at a time (the next waits
 * for the last, so sweeps stalled by an unreachable database never pile up on the pool). A failed
 * sweep is logged and the next one tries again. Each instance may do it: deletes are idempotent.
 */
export function scheduleSweeps(
  { store, clock }: Pick<Keyfob, "store" | "clock">,
  settings: SweepSettings & Pick<Config, "sweepInterval">,
): void {
  const next = () =>
    setTimeout(() => {
      sweepExpired(store, settings, clock.now())
        .catch((error) => log.error("sweep of expired rows failed", { error: String(error) }))
        .finally(next);
    }, settings.sweepInterval * 1000).unref();
  next();
}
