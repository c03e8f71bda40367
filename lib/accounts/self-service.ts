import type { Keyfob } from "../keyfob";
import { invalidRequest } from "../oauth/errors";
import { liveSessions, revokeSessions } from "../sessions/login-session";
import type { EnsProfileRow, IdentityKey, IdentitySummaryRow, LiveSessionRow, PasskeySummaryRow } from "../store/contract";
import { describeUserAgent, type UserAgent } from "../sessions/user-agent";
import { accountConsents, revokeConsent } from "../consent/grants";
import { deleteAccount } from "./directory";
import { requireStrongLogin, type SignedInRequester } from "./sensitive-changes";

/**
 * What a signed-in person does with their own account at /account, as Clerk's profile and
 * Keycloak's account console offer: see its ways in (wallets, Google, Apple, passkeys), login
 * sessions and the applications it allowed, unlink a way in (never the last), name and remove
 * passkeys, sign sessions out, revoke an application's access, and delete the account. Every change is written to the audit log; those of the account's ways in and
 * its deletion in the change's transaction. Taking a way in away and deleting the account need a
 * strong, recent login (lib/accounts/sensitive-changes.ts).
 */

/** Where the person acts from, for the audit log. */
export type Requester = { ip?: string };

/** A way into an account that can be taken away: an identity (not its passkey identity) or one passkey. */
export type WayIn = { identity: IdentityKey } | { passkey: string };

/** The longest passkey name. */
export const PASSKEY_NAME_MAX = 64;

/** The account as /account shows it: its identities, passkeys, live login sessions and the applications it allowed. */
export type AccountOverview = {
  /** Its ways in, each wallet with its ENS profile. */
  identities: (IdentitySummaryRow & { own: boolean; ens: EnsProfileRow | undefined })[];
  passkeys: PasskeySummaryRow[];
  sessions: (Omit<LiveSessionRow, "idHash" | "userAgent"> & { id: string; agent: UserAgent })[];
  /** Third-party applications' consent grants (lib/consent/grants.ts). */
  consents: Awaited<ReturnType<typeof accountConsents>>;
};

export async function accountOverview(
  k: Pick<Keyfob, "config" | "clock" | "store">,
  accountId: string,
  now = k.clock.now(),
): Promise<AccountOverview> {
  const [identities, passkeys, sessions, consents] = await Promise.all([
    k.store.accounts.identities(accountId),
    k.store.accounts.passkeys(accountId),
    liveSessions(k, accountId, now),
    accountConsents(k, accountId),
  ]);
  const ways = identities.filter((identity) => identity.provider !== "passkey");
  // Each wallet's ENS name and avatar, as its last wallet login kept them.
  const profiles = await Promise.all(
    ways.map((identity) => (identity.provider === "web3" ? k.store.ensProfiles.find(identity.subject, now) : undefined)),
  );
  return {
    // The passkey identity is the account's passkeys' shared user handle: they are listed one by one.
    identities: ways.map((identity, i) => ({ ...identity, own: isOwnWallet(accountId, identity), ens: profiles[i] })),
    passkeys,
    sessions: sessions.map(({ idHash, userAgent, ...session }) => ({ id: idHash, agent: describeUserAgent(userAgent), ...session })),
    consents,
  };
}

/** The wallet whose address is the account's: a new login of it would find the account again, so it stays. */
const isOwnWallet = (accountId: string, key: IdentityKey) => key.provider === "web3" && key.subject === accountId;

/**
 * Takes a way in away from an account: refused to a login that may not (requireStrongLogin), and
 * when it is the account's own wallet, not the account's, or the last way in. The account's row is locked for the change, so two removals at
 * once cannot each leave the other's as the last and end with none. The login sessions logged in
 * through it end (clients with a back-channel logout URI are told) and what was issued in them is
 * revoked, in the same transaction: whoever held the way in keeps nothing it opened.
 */
export async function removeWayIn(
  k: Pick<Keyfob, "clock" | "store" | "audit">,
  accountId: string,
  wayIn: WayIn,
  requester: SignedInRequester,
): Promise<void> {
  requireStrongLogin(k, accountId, "identity" in wayIn ? "account.identity_unlinked" : "account.passkey_removed", requester);
  if ("identity" in wayIn && (wayIn.identity.provider === "passkey" || isOwnWallet(accountId, wayIn.identity))) {
    throw invalidRequest({ code: wayIn.identity.provider === "passkey" ? "not_a_way_in" : "own_wallet" });
  }
  await k.store.transaction(async (tx) => {
    if (!(await tx.accounts.lockAccount(accountId))) throw invalidRequest({ code: "no_account" });
    const removed =
      "identity" in wayIn
        ? await tx.accounts.removeIdentity(accountId, wayIn.identity)
        : await tx.accounts.removePasskey(accountId, wayIn.passkey);
    if (!removed) throw invalidRequest({ code: "not_a_way_in" });
    // Rolls the removal back.
    if ((await tx.accounts.waysIn(accountId)) === 0) throw invalidRequest({ code: "last_way_in" });
    const ended = await tx.accounts.endSessionsThrough(accountId, wayIn, k.clock.now());
    const what = "identity" in wayIn ? `${wayIn.identity.provider}:${wayIn.identity.subject} at /account` : "at /account";
    await k.audit.writeWithin(tx, {
      action: "identity" in wayIn ? "account.identity_unlinked" : "account.passkey_removed",
      outcome: "success",
      accountId,
      ip: requester.ip,
      detail: `${what}; ${ended.sessions} sessions ended, ${ended.tokens} access tokens revoked`,
    });
  });
}

/** Names a passkey of the account: 1 to PASSKEY_NAME_MAX characters, no control characters, spaces trimmed. */
export async function renamePasskey(
  k: Pick<Keyfob, "store" | "audit">,
  accountId: string,
  passkeyId: string,
  name: string,
  requester: Requester = {},
) {
  const trimmed = name.trim();
  // biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is the point
  if (!trimmed || trimmed.length > PASSKEY_NAME_MAX || /[\u0000-\u001f\u007f]/.test(trimmed)) {
    throw invalidRequest({ code: "passkey_name", params: { max: PASSKEY_NAME_MAX } });
  }
  if (!(await k.store.accounts.renamePasskey(accountId, passkeyId, trimmed))) throw invalidRequest({ code: "not_a_way_in" });
  k.audit.record({ action: "account.passkey_renamed", outcome: "success", accountId, ip: requester.ip, detail: "at /account" });
  return trimmed;
}

/**
 * Signs the account's login sessions out: one (by its id) or every one. Through the session-ending
 * code the dashboard's revocation uses, so dashboard sessions started from them end too. Returns
 * how many ended.
 */
export async function signOutSessions(
  k: Pick<Keyfob, "clock" | "store" | "audit">,
  accountId: string,
  sessionId: string | undefined,
  requester: Requester = {},
) {
  const ended = await revokeSessions(k, accountId, sessionId);
  if (sessionId && ended === 0) throw invalidRequest({ code: "unknown_session" });
  k.audit.record({
    action: "session.ended",
    outcome: "success",
    accountId,
    ip: requester.ip,
    detail: sessionId ? "signed out at /account: one session" : `signed out everywhere at /account: ${ended} sessions`,
  });
  return ended;
}

/**
 * Revokes an application's access ("Revoke" on /account): its consent grant goes with its refresh
 * tokens for the account (lib/consent/grants.ts), audited in the same transaction.
 */
export async function revokeApplication(
  k: Pick<Keyfob, "clock" | "store" | "audit">,
  accountId: string,
  clientId: string,
  requester: Requester = {},
) {
  await k.store.transaction(async (tx) => {
    const revoked = await revokeConsent({ store: tx, clock: k.clock }, accountId, clientId);
    if (!revoked) throw invalidRequest({ code: "unknown_consent" });
    await k.audit.writeWithin(tx, {
      action: "consent.revoked",
      outcome: "success",
      accountId,
      clientId,
      ip: requester.ip,
      detail: `at /account: ${revoked.families} refresh grant(s) ended`,
    });
  });
}

/**
 * Deletes the account at its owner's request (from a login that may, requireStrongLogin), as the
 * dashboard does (lib/accounts/directory.ts): its tokens revoked, its identities and sessions
 * deleted, with the audit record in the same transaction.
 */
export async function deleteOwnAccount(k: Pick<Keyfob, "clock" | "store" | "audit">, accountId: string, requester: SignedInRequester) {
  requireStrongLogin(k, accountId, "account.deleted", requester);
  return k.store.transaction(async (tx) => {
    const deleted = await deleteAccount({ store: tx, clock: k.clock }, accountId);
    if (!deleted) throw invalidRequest({ code: "no_account" });
    await k.audit.writeWithin(tx, {
      action: "account.deleted",
      outcome: "success",
      accountId,
      ip: requester.ip,
      detail: `by its owner at /account; ${deleted.revokedTokens} access tokens revoked, ${deleted.endedSessions} sessions ended`,
    });
    return deleted;
  });
}
