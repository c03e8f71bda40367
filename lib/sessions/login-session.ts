import { createHash } from "node:crypto";
import type { Connector, LoginIdentity } from "../accounts/accounts";
import type { Keyfob } from "../keyfob";
import type { LoginSessionRow } from "../store/contract";
import { isOpaque, opaqueDigest, randomOpaque } from "../oauth/opaque";

/**
 * Login sessions: a user who logged in on the hosted page (wallet, Google, Apple) stays logged in
 * with Keyfob in that browser, so the next authorization request can be answered at once
 * (prompt=none) or with "Continue as". The cookie holds an opaque token; PostgreSQL holds its
 * SHA-256, so every instance knows the session and a revocation applies everywhere at the next
 * request. A session ends after SESSION_IDLE_TTL without use, SESSION_MAX_AGE after the login, on
 * logout, or when an admin revokes it.
 */

/** The cookie's name: `__Host-` (Secure, whole site, this host only) when the issuer is https. */
export const sessionCookieName = ({ issuerUrl }: { issuerUrl: string }) =>
  issuerUrl.startsWith("https:") ? "__Host-keyfob_session" : "keyfob_session";

export type LoginSession = {
  /** The SHA-256 of the token: how admins and logs name a session without being able to use it. */
  id: string;
  accountId: string;
  identity: LoginIdentity;
  /** When the user authenticated (auth_time), and how (amr). */
  authTime: Date;
  amr: string[];
};

/**
 * The `amr` value added to "wallet" when the wallet's signature did not recover to its address and
 * was accepted by its contract on chain (ERC-1271/6492): the RPC provider vouched for it, which is
 * not enough for everything (the dashboard refuses it unless ADMIN_CONTRACT_SIGNATURES is on).
 */
export const CONTRACT_SIGNATURE = "contract";

/**
 * How old a login may be for what needs a recent one: the dashboard's sign-in, and the changes at
 * /account that add or take away a way in or delete the account. The hosted login's own time limit.
 */
export const RECENT_LOGIN_MS = 10 * 60_000;

/**
 * How a login by each connector is named in `amr`: values of Keyfob's own, one per way in
 * ("wallet", "google", "apple", "passkey"), and "contract" beside "wallet" for a smart account's
 * signature. A passkey is "passkey" rather than an RFC 8176 value: "hwk" would claim a key bound
 * to hardware, which a synced passkey is not, and which of "user"/"pin"/"fpt"/"face" verified the
 * person is the authenticator's secret.
 */
export function authenticationMethods(connector: Connector, contractSignature = false): string[] {
  if (connector !== "web3") return [connector];
  return contractSignature ? ["wallet", CONTRACT_SIGNATURE] : ["wallet"];
}

/**
 * The session's `sid` in ID and logout tokens (Back-Channel Logout 1.0): derived from its id, so
 * clients never hold the id admins and /account revoke it by.
 */
export const sessionSid = (id: string) => createHash("sha256").update(`sid:${id}`).digest("base64url");

/** Starts a session after a login; the token goes into the cookie and is never stored. */
export async function startSession(
  { store, config, clock }: Pick<Keyfob, "config" | "clock" | "store">,
  login: { accountId: string; identity: LoginIdentity; contractSignature?: boolean; ip?: string; userAgent?: string },
  now = clock.now(),
): Promise<{ token: string; expiresAt: Date; session: LoginSession }> {
  const token = randomOpaque();
  const expiresAt = new Date(now.getTime() + config.sessionMaxAge * 1000);
  const amr = authenticationMethods(login.identity.provider, login.contractSignature);
  const row = await store.accounts.createSession({
    idHash: opaqueDigest(token),
    accountId: login.accountId,
    connector: login.identity.provider,
    subject: login.identity.subject,
    email: login.identity.email,
    emailVerified: login.identity.emailVerified,
    amr: amr.join(" "),
    authTime: now,
    lastSeenAt: now,
    expiresAt,
    ip: login.ip?.slice(0, 64),
    userAgent: login.userAgent?.slice(0, 300),
    passkeyId: login.identity.passkeyId,
  });
  return { token, expiresAt, session: view(row) };
}

/**
 * The live session of a cookie's token, or undefined (none, unknown, revoked, idle too long or
 * past its end). Finding it counts as use: its idle window starts again.
 */
export async function findSession(
  { store, config, clock }: Pick<Keyfob, "config" | "clock" | "store">,
  token: string | undefined,
  now = clock.now(),
): Promise<LoginSession | undefined> {
  if (!isOpaque(token)) return undefined;
  const row = await store.accounts.useSession(opaqueDigest(token), now, new Date(now.getTime() - config.sessionIdleTtl * 1000));
  return row ? view(row) : undefined;
}

/** Ends the session of a cookie's token (logout). */
export async function endSession({ store, clock }: Pick<Keyfob, "clock" | "store">, token: string | undefined): Promise<boolean> {
  if (!isOpaque(token)) return false;
  return (await store.accounts.revokeSessions({ idHash: opaqueDigest(token) }, clock.now())) === 1;
}

/** Revokes one session of an account (by id), or all of them: they end at their next request, on every instance. */
export function revokeSessions({ store, clock }: Pick<Keyfob, "store" | "clock">, accountId: string, sessionId?: string): Promise<number> {
  return store.accounts.revokeSessions({ accountId, idHash: sessionId || undefined }, clock.now());
}

/** An account's live sessions, most recently used first. */
export function liveSessions({ store, config, clock }: Pick<Keyfob, "config" | "clock" | "store">, accountId: string, now = clock.now()) {
  return store.accounts.liveSessions(accountId, now, new Date(now.getTime() - config.sessionIdleTtl * 1000));
}

function view(row: LoginSessionRow): LoginSession {
  return {
    id: row.idHash,
    accountId: row.accountId,
    identity: {
      provider: row.connector as Connector,
      subject: row.subject,
      email: row.email ?? undefined,
      emailVerified: row.emailVerified,
    },
    authTime: row.authTime,
    amr: row.amr.split(" "),
  };
}
