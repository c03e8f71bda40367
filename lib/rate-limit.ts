import type { RateLimit } from "./config";
import type { Keyfob } from "./keyfob";
import { addressBucket } from "./http/client-ip";
import { describe } from "./http/respond";
import { log } from "./log";
import { rateLimited } from "./metrics";
import { OAuthError } from "./oauth/errors";
import type { Store } from "./store";

/**
 * Rate limits shared by every instance: counter rows in PostgreSQL (an UNLOGGED table, so a hit
 * costs no WAL flush), counted with a sliding window (the previous window's count, weighted by how
 * much of it still overlaps, plus the current one's) by keyfob_rate_limit_hit (a database function,
 * in the migrations). A large budget is split into shards, rows of their own with a share each, so
 * that one busy client does not queue its requests on one row lock while the budget stays exact
 * across instances. Refusals are counted too, so a flood stays refused. When the database cannot be
 * reached the caller gets its error: requests are refused (503), never let through.
 */

/** A limit to check: what is counted (`ip:…`, `client:…`) and how much is allowed. */
export type LimitCheck = { key: string; limit: NonNullable<RateLimit>; name: "ip" | "client" };

/**
 * Counts a protocol request (Flow A, /auth, the token endpoints): a client that authenticated with
 * its secret against its own budget (RATE_LIMIT_PER_CLIENT), since its backend may speak for many
 * users from one address; anyone else against the caller's address (RATE_LIMIT_PER_IP, one budget
 * across those endpoints), so that nobody can spend a client's budget by naming it. Throws 429 over
 * the limit, and 503 when the database cannot count.
 */
export function limitProtocolRequest(
  { store, config, clock }: Pick<Keyfob, "config" | "clock" | "store">,
  endpoint: string,
  caller: { ip?: string; authenticatedClient?: string },
): Promise<void> {
  const { perIp, perClient } = config.rateLimits;
  if (caller.authenticatedClient) {
    return perClient
      ? enforceRateLimit(
          store,
          endpoint,
          { key: `client:${caller.authenticatedClient}`, limit: perClient, name: "client" },
          clock.now().getTime(),
        )
      : Promise.resolve();
  }
  return caller.ip && perIp
    ? enforceRateLimit(store, endpoint, { key: `ip:${addressBucket(caller.ip)}`, limit: perIp, name: "ip" }, clock.now().getTime())
    : Promise.resolve();
}

/** Counts an admin sign-in step against the caller's address (RATE_LIMIT_ADMIN_SIGNIN, a budget of its own). */
export function limitAdminSignIn(
  { store, config, clock }: Pick<Keyfob, "config" | "clock" | "store">,
  ip: string | undefined,
): Promise<void> {
  const limit = config.rateLimits.adminSignIn;
  return ip && limit
    ? enforceRateLimit(store, "admin_signin", { key: `admin-signin:${addressBucket(ip)}`, limit, name: "ip" }, clock.now().getTime())
    : Promise.resolve();
}

/** An entry of a user code let through the limits; settled once the code proved right or wrong. */
export type UserCodeEntry = { settle(wrong: boolean): Promise<void> };

const WRONG_USER_CODES = "user-code-wrong";

/**
 * Counts a user code entered on /device (RFC 8628 5.1: guessing must be limited) against the
 * caller's address (RATE_LIMIT_USER_CODE_PER_IP). RATE_LIMIT_USER_CODE_TOTAL counts wrong codes from
 * everyone, never right ones. Once they reach it, an attack is under way: an address may then enter
 * a code only while it has no wrong code of its own within the window (at most one wrong code per
 * address and window). Guessing from many addresses stays bounded so (the budget, plus one guess
 * per address and window), and a person entering the right code from an address of their own is
 * never refused for others' guesses. Under attack the entry is counted as the address's wrong code
 * before the code is looked up, in one statement, so that concurrent entries from one address get
 * one look-up between them; a code that proves right (or could not be one) takes it back. Throws
 * 429, and 503 when the database cannot count.
 */
export async function limitUserCodeEntry(
  { store, config, clock }: Pick<Keyfob, "config" | "clock" | "store">,
  ip: string | undefined,
  now = clock.now().getTime(),
): Promise<UserCodeEntry> {
  const { perIp, total } = config.userCodeLimits;
  if (ip && perIp) await enforceRateLimit(store, "device", { key: `user-code:${addressBucket(ip)}`, limit: perIp, name: "ip" }, now);
  if (!total) return { settle: async () => {} };
  const failClosed = uncounted("device");
  const seconds = now / 1000;
  // Callers without a known address (outside Keyfob's server) count as one.
  const own = `${WRONG_USER_CODES}:${ip ? addressBucket(ip) : "unknown"}`;
  const countOwn = () => store.limits.hit(own, 1, total.windowSeconds, 1, seconds);
  const countEveryone = () => store.limits.hit(WRONG_USER_CODES, total.max, total.windowSeconds, shardsFor(total), seconds);
  const everyone = await store.limits.peek(WRONG_USER_CODES, total.windowSeconds, shardsFor(total), seconds).catch(failClosed);
  if (slidingEstimate(total, everyone.hits, everyone.previousHits, now) < total.max) {
    return {
      async settle(wrong) {
        if (wrong) await Promise.all([countEveryone(), countOwn()]).catch(failClosed);
      },
    };
  }
  const reserved = await countOwn().catch(failClosed);
  if (!reserved.allowed) {
    rateLimited.inc({ endpoint: "device", limit: "wrong_codes" });
    // Allowed again once the address's own wrong codes (this refusal's included) have faded to none.
    const retryAfter = secondsUntilAllowed({ max: 0, windowSeconds: total.windowSeconds }, reserved.hits, reserved.previousHits, now);
    throw tooManyRequests(retryAfter, "too many wrong codes just now");
  }
  return {
    async settle(wrong) {
      await (wrong ? countEveryone() : store.limits.takeBack(own, total.windowSeconds, seconds)).catch(failClosed);
    },
  };
}

/**
 * A shard's share of a budget: large enough that what each shard may leave unused (less than one
 * hit) is lost in the budget, small enough that a busy key gets a shard per concurrent request.
 * Shards: see docs/decisions/2026-11-24-rate-limit-shards.md
 */
const SHARD_SHARE = 250;
const MAX_SHARDS = 16;
export const shardsFor = (limit: NonNullable<RateLimit>) => Math.min(MAX_SHARDS, Math.max(1, Math.floor(limit.max / SHARD_SHARE)));

/**
 * Hits leased in advance: a budget of several shards gives an instance up to MAX_LEASE hits at once
 * (at most 1/LEASE_SHARE of a shard's share), spent without a round trip until they run out or the
 * window ends. They are counted when leased, so the budget's bound stays exact across instances; an
 * instance loses what it leaves unspent at the window's end, and a small budget (one shard) is counted
 * hit by hit as before. Leases: see docs/decisions/2026-11-24-rate-limit-leases.md
 */
const LEASE_SHARE = 100;
const MAX_LEASE = 64;
export const leaseSizeFor = (limit: NonNullable<RateLimit>) => {
  const shards = shardsFor(limit);
  return shards === 1 ? 1 : Math.min(MAX_LEASE, Math.max(1, Math.floor(limit.max / shards / LEASE_SHARE)));
};

/** An instance's hits leased for one key in one window; `full` once no shard had room for a lease. */
type Lease = { window: number; left: number; full: boolean; pending?: Promise<void> };
/** Keys with a lease, per store (an instance), oldest first; beyond the bound the oldest is forgotten (its hits lost). */
const MAX_LEASED_KEYS = 10_000;
const leasesByStore = new WeakMap<Store, Map<string, Lease>>();

/** Takes a hit from this instance's lease for the key, leasing more when it ran out; false when none could be leased. */
async function spendLeased(store: Store, check: LimitCheck, size: number, now: number): Promise<boolean> {
  let leases = leasesByStore.get(store);
  if (!leases) {
    leases = new Map();
    leasesByStore.set(store, leases);
  }
  const window = Math.floor(now / 1000 / check.limit.windowSeconds);
  for (;;) {
    let lease = leases.get(check.key);
    if (lease?.window !== window) lease = undefined;
    if (lease && lease.left > 0) {
      lease.left--;
      return true;
    }
    if (lease?.full) return false;
    if (lease?.pending) {
      // Requests that find a lease being taken wait for it rather than take one each.
      await lease.pending;
      continue;
    }
    const taken: Lease = lease ?? { window, left: 0, full: false };
    leases.delete(check.key);
    leases.set(check.key, taken);
    if (leases.size > MAX_LEASED_KEYS) leases.delete(leases.keys().next().value as string);
    taken.pending = store.limits
      .hit(check.key, check.limit.max, check.limit.windowSeconds, shardsFor(check.limit), now / 1000, size)
      .then((hit) => {
        if (hit.allowed) taken.left += size;
        else taken.full = true;
      })
      .finally(() => {
        taken.pending = undefined;
      });
    await taken.pending;
  }
}

/** Counts one hit and refuses (429, Retry-After) when it is over the limit. */
export async function enforceRateLimit(store: Store, endpoint: string, check: LimitCheck, now: number): Promise<void> {
  const failClosed = uncounted(endpoint);
  const size = leaseSizeFor(check.limit);
  if (size > 1 && (await spendLeased(store, check, size, now).catch(failClosed))) return;
  const hit = await store.limits
    .hit(check.key, check.limit.max, check.limit.windowSeconds, shardsFor(check.limit), now / 1000)
    .catch(failClosed);
  if (hit.allowed) return;
  rateLimited.inc({ endpoint, limit: check.name });
  const retryAfter = Math.max(1, secondsUntilAllowed(check.limit, hit.hits, hit.previousHits, now));
  const whose = { ip: "from this address", client: "for this client" }[check.name];
  throw tooManyRequests(retryAfter, `too many requests ${whose}`);
}

/** Fails closed: a request that cannot be counted is refused (503), whatever stopped the count. */
const uncounted =
  (endpoint: string) =>
  (error: unknown): never => {
    log.error("rate limits could not be counted", { endpoint, cause: describe(error) });
    throw new OAuthError("temporarily_unavailable", "the service cannot take requests just now; try again shortly", 503, {
      retryAfter: 5,
    });
  };

/** The sliding-window estimate of a count: previous × (1 − elapsed/window) + hits. */
function slidingEstimate(limit: NonNullable<RateLimit>, hits: number, previousHits: number, now: number): number {
  const elapsed = (now / 1000) % limit.windowSeconds;
  return previousHits * (1 - elapsed / limit.windowSeconds) + hits;
}

/** Seconds until the sliding-window estimate is back within the limit; 0 when it is within now. */
export function secondsUntilAllowed(limit: NonNullable<RateLimit>, hits: number, previousHits: number, now: number): number {
  const window = limit.windowSeconds;
  const elapsed = (now / 1000) % window;
  const estimate = slidingEstimate(limit, hits, previousHits, now);
  if (estimate <= limit.max) return 0;
  const untilNextWindow = window - elapsed;
  // Within this window the estimate falls only as the previous window's weight fades;
  const fading = previousHits > 0 ? ((estimate - limit.max) * window) / previousHits : Infinity;
  // after it, this window's hits are the ones that fade.
  const seconds = fading <= untilNextWindow ? fading : untilNextWindow + (hits > limit.max ? window * (1 - limit.max / hits) : 0);
  return Math.max(1, Math.ceil(seconds));
}

export function tooManyRequests(retryAfterSeconds: number, description: string): OAuthError {
  return new OAuthError("temporarily_unavailable", `${description}; retry after ${retryAfterSeconds} seconds`, 429, {
    retryAfter: retryAfterSeconds,
  });
}
