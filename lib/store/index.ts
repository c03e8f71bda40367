/**
 * The store: every statement Keyfob runs on its tables lives in this folder. Its contract,
 * contract.ts, declares every operation with its rule and the rows they take and give; this builds
 * the object that keeps it, from one module per table group. The single-use rows a login goes
 * through have one each: challenges.ts (Flow A), pushed-requests.ts, interactions.ts,
 * authorization-codes.ts, device-authorizations.ts and passkey-challenges.ts, with grants.ts, what
 * redeeming a code and a device code share; consent-grants.ts, what accounts granted clients. Then tokens.ts: access tokens and refresh families;
 * clients.ts; accounts.ts: accounts, identities, passkeys, login and dashboard sessions, admin
 * roles; logouts.ts: the back-channel logout outbox; dpop.ts: DPoP proofs and client assertions seen; ens.ts: resolved
 * ENS profiles; keys.ts; limits.ts; audit.ts; sweep.ts, housekeeping across them; changes.ts, the
 * change feed.
 *
 * The rule: Prisma for the domain's reads and writes. Plain SQL on the pool only for hot-path
 * statements, where a measured round trip or Prisma's query compilation mattered (Flow A, the code
 * exchange, refresh, token checks, the client cache's load, audit batches; see
 * docs/decisions/2026-11-21-hot-statements-in-plain-sql.md), and
 * for what Prisma cannot say (CTEs that consume and insert in one statement, the rate-limit
 * counter's database function, LISTEN/NOTIFY). Callers outside lib/store never see Prisma or pg:
 * they call the contract's operations and name its row types, `<Thing>Row` (tests and the benchmark
 * arrange and inspect rows through rawConnection). Rows come back with camelCase fields whichever
 * of the two ran the statement (SQL aliases its columns). Triggers and functions in the database
 * are created by migrations (prisma/migrations), never at start-up.
 */
import { accountStatements } from "./accounts";
import { auditStatements } from "./audit";
import { authorizationCodeStatements } from "./authorization-codes";
import { challengeStatements } from "./challenges";
import { Notifications, PolledChanges } from "./changes";
import { clientStatements } from "./clients";
import { consentGrantStatements } from "./consent-grants";
import { CONNECTION_WAIT_MS, createConnection, enclosedIn, type Connection, type ConnectionOptions } from "./connection";
import type { Store } from "./contract";
import { deviceAuthorizationStatements } from "./device-authorizations";
import { clientAssertionStatements, dpopProofStatements } from "./dpop";
import { ensProfileStatements } from "./ens";
import { chainCursorStatements } from "./chain-cursors";
import { interactionStatements } from "./interactions";
import { keyStatements } from "./keys";
import { limitStatements } from "./limits";
import { logoutStatements } from "./logouts";
import { passkeyChallengeStatements } from "./passkey-challenges";
import { pushedRequestStatements } from "./pushed-requests";
import { sweep } from "./sweep";
import { tokenStatements } from "./tokens";

/** The store on a new pool (see createConnection for the options). */
export function createStore(url: string, options: ConnectionOptions | number = {}): Store {
  return storeOn(createConnection(url, typeof options === "number" ? { poolSize: options } : options));
}

const connections = new WeakMap<Store, Connection>();

/**
 * An interactive transaction (an admin change, a key rotation, an account's own change) waits for a
 * connection as long as a statement does: Prisma's own limits (2 s to start, 5 s in all) are
 * shorter, so on a busy database a change failed (P2028) where a statement would have waited. It
 * has 15 s to finish: a handful of statements, whose row locks a stalled one must not hold long.
 */
const TRANSACTION_LIMITS = { maxWait: CONNECTION_WAIT_MS, timeout: 15_000 };

/** The Prisma client and pool under a store: for tests and the benchmark, to arrange and inspect rows. */
export function rawConnection(store: Store): Connection {
  return connections.get(store)!;
}

function storeOn(connection: Connection): Store {
  const { db, pool } = connection;
  const store: Store = {
    challenges: challengeStatements(connection),
    pushedRequests: pushedRequestStatements(connection),
    interactions: interactionStatements(connection),
    consentGrants: consentGrantStatements(connection),
    authorizationCodes: authorizationCodeStatements(connection),
    deviceAuthorizations: deviceAuthorizationStatements(connection),
    passkeyChallenges: passkeyChallengeStatements(connection),
    tokens: tokenStatements(connection),
    clients: clientStatements(connection),
    accounts: accountStatements(connection),
    keys: keyStatements(connection),
    audit: auditStatements(connection),
    limits: limitStatements(connection),
    logouts: logoutStatements(connection),
    dpopProofs: dpopProofStatements(connection),
    clientAssertions: clientAssertionStatements(connection),
    ensProfiles: ensProfileStatements(connection),
    chainCursors: chainCursorStatements(connection),
    sweep: (bounds) => sweep(connection, bounds),
    transaction: (work) => db.$transaction((tx) => work(storeOn({ db: enclosedIn(tx), pool })), TRANSACTION_LIMITS),
    changeFeed: (directUrl) =>
      directUrl
        ? new Notifications({ connectionString: directUrl, connectionTimeoutMillis: 5_000, keepAlive: true })
        : new PolledChanges(pool),
    async ping() {
      await pool.query("SELECT 1");
    },
    poolStats: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }),
    async close() {
      await db.$disconnect();
      await pool.end();
    },
  };
  connections.set(store, connection);
  return store;
}

export { Duplicate } from "./connection";
export type { ChangeFeed, KeyPurpose, Store, Subscriber } from "./contract";
