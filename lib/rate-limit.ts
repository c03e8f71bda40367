import type pg from "pg";
import type { RateLimit } from "./config";
import { normalizeClientId } from "./clients/registry";
import type { Keyfob } from "./keyfob";
import { addressBucket } from "./http/client-ip";
import { describe } from "./http/respond";
import { log } from "./log";
import { rateLimited } from "./metrics";
import { OAuthError } from "./oauth/errors";

/**
 * Rate limits shared by every instance: one counter row per key in PostgreSQL (an UNLOGGED table,
 * so a hit costs no WAL flush), counted with a sliding window (the previous window's count,
 * weighted by how much of it still overlaps, plus the current one's). Refusals are counted too, so
 * a flood stays refused. When the database cannot be reached the caller gets its error: requests
 * are refused (503), never let through.
 */

/** A limit to check: what is counted (`ip:…`, `client:…`) and how much is allowed. */
export type LimitCheck = { key: string; limit: NonNullable<RateLimit>; name: "ip" | "client" };

/**
 * Counts a protocol request (Flow A, /auth, the token endpoints) against the caller's address
 * (RATE_LIMIT_PER_IP, one budget across those endpoints) and against the client it names
 * (RATE_LIMIT_PER_CLIENT). Throws 429 over a limit, and the database's error when it cannot count.
 */
export function limitProtocolRequest({ pool, config }: Keyfob, endpoint: string, caller: { ip?: string; clientId?: string }): Promise<void> {
  const checks: LimitCheck[] = [];
  const { perIp, perClient } = config.rateLimits;
  if (caller.ip && perIp) checks.push({ key: `ip:${addressBucket(caller.ip)}`, limit: perIp, name: "ip" });
  // One budget per client however its id is spelled: a license address in any case.
  if (caller.clientId && perClient) checks.push({ key: `client:${normalizeClientId(caller.clientId)}`, limit: perClient, name: "client" });
  return enforceRateLimits(pool, endpoint, checks);
}

/** Counts an admin sign-in step against the caller's address (RATE_LIMIT_ADMIN_SIGNIN, a budget of its own). */
export function limitAdminSignIn({ pool, config }: Keyfob, ip: string | undefined): Promise<void> {
  const limit = config.rateLimits.adminSignIn;
  return enforceRateLimits(pool, "admin_signin", ip && limit ? [{ key: `admin-signin:${addressBucket(ip)}`, limit, name: "ip" }] : []);
}

type Counted = { key: string; hits: number; previous_hits: number; window: string };

/** Counts one hit on each key and refuses (429, Retry-After) when any is over its limit. */
export async function enforceRateLimits(pool: pg.Pool, endpoint: string, checks: LimitCheck[], now = Date.now()): Promise<void> {
  if (checks.length === 0) return;
  const windows = checks.map((c) => Math.floor(now / 1000 / c.limit.windowSeconds));
  const { rows } = await pool.query<Counted>(hitStatement(checks, windows)).catch((error: unknown) => {
    // Fail closed: a request that cannot be counted is refused, whatever stopped the count.
    log.error("rate limits could not be counted", { endpoint, cause: describe(error) });
    throw new OAuthError("temporarily_unavailable", "the service cannot take requests just now; try again shortly", 503, { retryAfter: 5 });
  });
  for (const row of rows) {
    const check = checks.find((c) => c.key === row.key)!;
    const retryAfter = secondsUntilAllowed(check.limit, row.hits, row.previous_hits, now);
    if (retryAfter > 0) {
      rateLimited.inc({ endpoint, limit: check.name });
      throw tooManyRequests(retryAfter, check.name === "ip" ? "too many requests from this address" : "too many requests for this client");
    }
  }
}

/** One statement for every key: count the hit, rolling the window over when it has passed. */
function hitStatement(checks: LimitCheck[], windows: number[]) {
  return {
    name: "keyfob_rate_limit_hit",
    text: `INSERT INTO rate_limits AS r (key, "window", hits, previous_hits, expires_at)
           SELECT k, w, 1, 0, to_timestamp(e) AT TIME ZONE 'UTC' FROM unnest($1::text[], $2::bigint[], $3::float8[]) AS t(k, w, e)
           ON CONFLICT (key) DO UPDATE SET
             previous_hits = CASE WHEN r."window" = EXCLUDED."window" THEN r.previous_hits
                                  WHEN r."window" = EXCLUDED."window" - 1 THEN r.hits ELSE 0 END,
             hits = CASE WHEN r."window" = EXCLUDED."window" THEN r.hits + 1 ELSE 1 END,
             "window" = EXCLUDED."window",
             expires_at = EXCLUDED.expires_at
           RETURNING key, hits, previous_hits, "window"`,
    values: [
      checks.map((c) => c.key),
      windows,
      // A row is needed until its window and the next one are over.
      checks.map((c, i) => (windows[i] + 2) * c.limit.windowSeconds),
    ],
  };
}

/**
 * Seconds until the sliding-window estimate is back within the limit; 0 when it is within now.
 * estimate(t) = previous × (1 − elapsed(t)/window) + hits.
 */
export function secondsUntilAllowed(limit: NonNullable<RateLimit>, hits: number, previousHits: number, now: number): number {
  const window = limit.windowSeconds;
  const elapsed = (now / 1000) % window;
  const estimate = previousHits * (1 - elapsed / window) + hits;
  if (estimate <= limit.max) return 0;
  const untilNextWindow = window - elapsed;
  // Within this window the estimate falls only as the previous window's weight fades;
  const fading = previousHits > 0 ? ((estimate - limit.max) * window) / previousHits : Infinity;
  // after it, this window's hits are the ones that fade.
  const seconds = fading <= untilNextWindow ? fading : untilNextWindow + (hits > limit.max ? window * (1 - limit.max / hits) : 0);
  return Math.max(1, Math.ceil(seconds));
}

export function tooManyRequests(retryAfterSeconds: number, description: string): OAuthError {
  return new OAuthError("temporarily_unavailable", `${description}; retry after ${retryAfterSeconds} seconds`, 429, { retryAfter: retryAfterSeconds });
}
