/**
 * Account self-service at /account (lib/accounts/self-service.ts), on real PostgreSQL: the
 * account's ways in, sessions and passkeys as listed; unlinking, never the last way in (not even
 * two removals at once), which ends the sessions logged in through the way in and revokes what was
 * issued in them; naming and removing passkeys; signing sessions out (dashboard sessions
 * started from them end too); deleting the account with what it holds; signing in through the
 * hosted login page as /account's own client. What a session's login may change: nothing of the
 * ways in, nor the account's deletion, for a smart account's signature (the chain RPC's word), and
 * only within ten minutes of the login otherwise.
 */
import { randomBytes } from "node:crypto";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { createSiweMessage } from "viem/siwe";
import { describe, expect, it } from "vitest";
import { accountLoginUrl, accountReturnUri } from "@/lib/accounts/account-login";
import { linkWallet, resolveAccount, type LoginIdentity } from "@/lib/accounts/accounts";
import { startAuthorization } from "@/lib/actions/authorize";
import { completeAuthorization } from "@/lib/interactions/interactions";
import { accountOverview, deleteOwnAccount, removeWayIn, renamePasskey, signOutSessions } from "@/lib/accounts/self-service";
import type { SignedInRequester } from "@/lib/accounts/sensitive-changes";
import { readAdminSession } from "@/lib/admin/session";
import { addPasskey, addPasskeyOptions } from "@/lib/passkeys/passkeys";
import { opaqueDigest, randomOpaque } from "@/lib/oauth/opaque";
import { keyfob } from "@/lib/runtime";
import { findSession, startSession } from "@/lib/sessions/login-session";
import { accountLinkNonce, verifyAccountLink } from "@/lib/siwe/login";
import { SIWE_PURPOSE } from "@/lib/siwe/purpose";
import { SoftAuthenticator } from "./support/authenticator";
import { expectError, ISSUER } from "./support/flow-a";
import { activeUser, authorizeQuery, FORM, google, registerApp, signedInNow, token, userinfo } from "./support/flow-b";
import { tables } from "./support/database";
import { route } from "./support/routes";

const tokenRoute = route("/token");

const CHROME_ON_MAC =
  "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36";
const SAFARI_ON_IPHONE =
  "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1";

/** A Google account, with a wallet linked when asked. */
async function googleAccount(withWallet = false) {
  const identity = google();
  const accountId = await resolveAccount(keyfob(), identity);
  const wallet = privateKeyToAccount(generatePrivateKey()).address;
  if (withWallet) await linkWallet(keyfob(), accountId, wallet);
  return { accountId, identity, wallet };
}

/** A passkey row of the account (the WebAuthn ceremonies are passkeys.test.ts's). */
async function passkeyOf(accountId: string) {
  const id = randomBytes(16).toString("base64url");
  await keyfob().store.accounts.addPasskey({
    id,
    accountId,
    userHandle: randomBytes(32).toString("base64url"),
    publicKey: randomBytes(77),
    transports: ["internal"],
    deviceType: "multiDevice",
    backedUp: true,
  });
  return id;
}

const refusal = (code: string) => ({ code: "invalid_request", why: { code } });

const refresh = (clientId: string, refreshToken: string) =>
  tokenRoute(
    new Request(`${ISSUER}/token`, {
      method: "POST",
      headers: FORM,
      body: new URLSearchParams({ grant_type: "refresh_token", refresh_token: refreshToken, client_id: clientId }),
    }),
  );

/**
 * A login of `identity` on the hosted page to an app that takes refresh tokens and has a
 * back-channel logout URI: its session, and the tokens of the code exchange and of one refresh.
 */
async function loginThrough(identity: LoginIdentity) {
  const app = await registerApp({ settings: { refreshTokensAllowed: true, backchannelLogoutUri: "https://fleet.example.com/logout" } });
  const start = await startAuthorization(keyfob(), authorizeQuery(app, { scope: "openid email offline_access" }));
  if (start.kind !== "login") throw new Error("expected the login page");
  const { location, newSession } = await completeAuthorization(keyfob(), start.interactionId, { identity });
  const exchanged = await (await token(app, { code: new URL(location).searchParams.get("code")! })).json();
  const refreshed = await (await refresh(app.clientId, exchanged.refresh_token)).json();
  expect(refreshed.refresh_token).toBeDefined();
  const session = (await findSession(keyfob(), newSession!.token))!;
  return {
    app,
    session,
    accessTokens: [exchanged.access_token, refreshed.access_token] as string[],
    refreshToken: refreshed.refresh_token,
  };
}

type Login = Awaited<ReturnType<typeof loginThrough>>;

/**
 * Whether what a login opened still works: its session, its access tokens at /userinfo, its
 * refresh token (rotated when it works, so the next check presents the new one).
 */
async function stillOpen(login: Login) {
  const statuses = await Promise.all(login.accessTokens.map(async (t) => (await userinfo(t)).status));
  const refreshed = await refresh(login.app.clientId, login.refreshToken);
  if (refreshed.status === 200) login.refreshToken = (await refreshed.json()).refresh_token;
  return {
    session: (await keyfob().store.accounts.findSession(login.session.id))?.revokedAt === null,
    userinfo: statuses,
    refresh: refreshed.status,
  };
}

const logoutsQueued = (login: Login) =>
  tables(keyfob()).backchannelLogout.count({ where: { clientId: login.app.clientId, sessionId: login.session.id } });

async function auditEvents(accountId: string) {
  await keyfob().audit.flush();
  return tables(keyfob()).auditEvent.findMany({ where: { accountId }, orderBy: { id: "asc" }, select: { action: true, detail: true } });
}

describe("the account's overview", () => {
  it("lists its identities with last use, its passkeys, and its live sessions with device and place", async () => {
    const { accountId, wallet } = await googleAccount(true);
    const passkey = await passkeyOf(accountId);
    const identity = { provider: "google" as const, subject: "x", emailVerified: false };
    await startSession(keyfob(), { accountId, identity, ip: "203.0.113.7", userAgent: CHROME_ON_MAC });
    await startSession(keyfob(), { accountId, identity, ip: "2001:db8::1", userAgent: SAFARI_ON_IPHONE });

    const overview = await accountOverview(keyfob(), accountId);
    expect(overview.identities.map((i) => [i.provider, i.own, i.lastLoginAt instanceof Date])).toEqual([
      ["google", false, true],
      ["web3", false, true],
    ]);
    expect(overview.identities[1].subject).toBe(wallet);
    expect(overview.passkeys.map((p) => [p.id, p.name])).toEqual([[passkey, null]]);
    expect(overview.sessions.map((s) => [s.ip, s.agent]).sort()).toEqual([
      ["2001:db8::1", { browser: "Mobile Safari 17", os: "iOS", mobile: true }],
      ["203.0.113.7", { browser: "Chrome 131", os: "Mac OS", mobile: false }],
    ]);
    expect(overview.sessions[0].id).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });
});

describe("unlinking", () => {
  it("takes a wallet away, audited, but never the last way in", async () => {
    const { accountId, identity, wallet } = await googleAccount(true);
    await removeWayIn(keyfob(), accountId, { identity: { provider: "web3", subject: wallet } }, signedInNow("203.0.113.9"));
    expect(await keyfob().store.accounts.findIdentity({ provider: "web3", subject: wallet })).toBeUndefined();

    await expect(
      removeWayIn(keyfob(), accountId, { identity: { provider: "google", subject: identity.subject } }, signedInNow()),
    ).rejects.toMatchObject(refusal("last_way_in"));
    expect(await keyfob().store.accounts.findIdentity({ provider: "google", subject: identity.subject })).toBeDefined();
    // Gone already, or not the account's.
    await expect(
      removeWayIn(keyfob(), accountId, { identity: { provider: "web3", subject: wallet } }, signedInNow()),
    ).rejects.toMatchObject(refusal("not_a_way_in"));
    const other = await googleAccount();
    await expect(
      removeWayIn(keyfob(), accountId, { identity: { provider: "google", subject: other.identity.subject } }, signedInNow()),
    ).rejects.toMatchObject(refusal("not_a_way_in"));
    expect(await auditEvents(accountId)).toEqual([
      { action: "account.identity_unlinked", detail: `web3:${wallet} at /account; 0 sessions ended, 0 access tokens revoked` },
    ]);
  });

  it("refuses the wallet whose address is the account's", async () => {
    const wallet = privateKeyToAccount(generatePrivateKey()).address;
    const accountId = await resolveAccount(keyfob(), { provider: "web3", subject: wallet, emailVerified: false });
    await resolveAccount(keyfob(), google()).then((other) => expect(other).not.toBe(accountId));
    await passkeyOf(accountId);
    await expect(
      removeWayIn(keyfob(), accountId, { identity: { provider: "web3", subject: wallet } }, signedInNow()),
    ).rejects.toMatchObject(refusal("own_wallet"));
  });

  it("of two removals at once, lets only one leave the account with a way in", async () => {
    for (let round = 0; round < 3; round++) {
      const { accountId, identity, wallet } = await googleAccount(true);
      const results = await Promise.allSettled([
        removeWayIn(keyfob(), accountId, { identity: { provider: "web3", subject: wallet } }, signedInNow()),
        removeWayIn(keyfob(), accountId, { identity: { provider: "google", subject: identity.subject } }, signedInNow()),
      ]);
      expect(results.map((r) => r.status).sort()).toEqual(["fulfilled", "rejected"]);
      expect(results.find((r) => r.status === "rejected")).toMatchObject({ reason: refusal("last_way_in") });
      expect(await keyfob().store.accounts.waysIn(accountId)).toBe(1);
    }
  });
});

describe("unlinking ends what the way in opened", () => {
  it("a wallet: its sessions end with back-channel logout, their tokens and refresh grants are revoked; Google's stay", async () => {
    const { accountId, identity, wallet } = await googleAccount(true);
    const throughWallet = await loginThrough({ provider: "web3", subject: wallet, emailVerified: false });
    const throughGoogle = await loginThrough(identity);
    expect(throughWallet.session.accountId).toBe(accountId);
    expect(await stillOpen(throughWallet)).toEqual({ session: true, userinfo: [200, 200], refresh: 200 });

    await removeWayIn(keyfob(), accountId, { identity: { provider: "web3", subject: wallet } }, signedInNow());
    expect(await stillOpen(throughWallet)).toEqual({ session: false, userinfo: [401, 401], refresh: 400 });
    expect(await logoutsQueued(throughWallet)).toBe(1);
    expect(await stillOpen(throughGoogle)).toEqual({ session: true, userinfo: [200, 200], refresh: 200 });
    expect(await logoutsQueued(throughGoogle)).toBe(0);
    // The code exchange's access token and two refreshes' (the check before the unlink refreshed once more).
    expect((await auditEvents(accountId)).filter((e) => e.action === "account.identity_unlinked")).toEqual([
      { action: "account.identity_unlinked", detail: `web3:${wallet} at /account; 1 sessions ended, 3 access tokens revoked` },
    ]);
  });

  it("a Google identity: the sessions logged in with it end, the wallet's stay", async () => {
    const { accountId, identity, wallet } = await googleAccount(true);
    const throughGoogle = await loginThrough(identity);
    const throughWallet = await loginThrough({ provider: "web3", subject: wallet, emailVerified: false });
    await removeWayIn(keyfob(), accountId, { identity: { provider: "google", subject: identity.subject } }, signedInNow());
    expect(await stillOpen(throughGoogle)).toEqual({ session: false, userinfo: [401, 401], refresh: 400 });
    expect(await logoutsQueued(throughGoogle)).toBe(1);
    expect(await stillOpen(throughWallet)).toEqual({ session: true, userinfo: [200, 200], refresh: 200 });
  });

  it("a passkey: the sessions logged in with that passkey end, another passkey's stay", async () => {
    const { accountId } = await googleAccount();
    const [first, second] = [await passkeyOf(accountId), await passkeyOf(accountId)];
    const userHandle = (await keyfob().store.accounts.findPasskey(first))!.userHandle!;
    await keyfob().store.accounts.addIdentity({ provider: "passkey", subject: userHandle, accountId });
    const passkey = (passkeyId: string): LoginIdentity => ({ provider: "passkey", subject: userHandle, emailVerified: false, passkeyId });
    const throughFirst = await loginThrough(passkey(first));
    const throughSecond = await loginThrough(passkey(second));
    expect(throughFirst.session.accountId).toBe(accountId);

    await removeWayIn(keyfob(), accountId, { passkey: first }, signedInNow());
    expect(await stillOpen(throughFirst)).toEqual({ session: false, userinfo: [401, 401], refresh: 400 });
    expect(await logoutsQueued(throughFirst)).toBe(1);
    expect(await stillOpen(throughSecond)).toEqual({ session: true, userinfo: [200, 200], refresh: 200 });
  });
});

describe("passkeys", () => {
  it("are named (trimmed, 1 to 64 characters) and removed while another way in is left", async () => {
    const { accountId, identity } = await googleAccount();
    const passkey = await passkeyOf(accountId);
    expect(await renamePasskey(keyfob(), accountId, passkey, "  Work laptop ")).toBe("Work laptop");
    expect((await accountOverview(keyfob(), accountId)).passkeys.map((p) => p.name)).toEqual(["Work laptop"]);
    for (const bad of ["", "   ", "x".repeat(65), "tab\there"]) {
      await expect(renamePasskey(keyfob(), accountId, passkey, bad)).rejects.toMatchObject(refusal("passkey_name"));
    }
    const other = await googleAccount();
    await expect(renamePasskey(keyfob(), other.accountId, passkey, "Mine now")).rejects.toMatchObject(refusal("not_a_way_in"));

    // The passkey is the last way in once Google is gone.
    await removeWayIn(keyfob(), accountId, { identity: { provider: "google", subject: identity.subject } }, signedInNow());
    await expect(removeWayIn(keyfob(), accountId, { passkey }, signedInNow())).rejects.toMatchObject(refusal("last_way_in"));
    expect((await accountOverview(keyfob(), accountId)).passkeys).toHaveLength(1);
    const second = await passkeyOf(accountId);
    await removeWayIn(keyfob(), accountId, { passkey }, signedInNow());
    expect((await accountOverview(keyfob(), accountId)).passkeys.map((p) => p.id)).toEqual([second]);
    // The rename is queued, the removals written with their change: compared in any order.
    expect((await auditEvents(accountId)).map((e) => e.action).sort()).toEqual([
      "account.identity_unlinked",
      "account.passkey_removed",
      "account.passkey_renamed",
    ]);
  });
});

describe("signing out", () => {
  it("ends one session or every one, and the dashboard sessions started from them", async () => {
    const { accountId, identity } = await googleAccount();
    const first = await startSession(keyfob(), { accountId, identity });
    const second = await startSession(keyfob(), { accountId, identity });
    const third = await startSession(keyfob(), { accountId, identity });
    const adminToken = randomOpaque();
    await keyfob().store.accounts.createAdminSession({
      idHash: opaqueDigest(adminToken),
      accountId,
      loginSessionId: first.session.id,
      expiresAt: new Date(Date.now() + 3600_000),
    });
    expect(await readAdminSession(keyfob(), adminToken)).toBeDefined();

    expect(await signOutSessions(keyfob(), accountId, first.session.id)).toBe(1);
    expect(await findSession(keyfob(), first.token)).toBeUndefined();
    expect(await readAdminSession(keyfob(), adminToken)).toBeUndefined();
    expect(await findSession(keyfob(), second.token)).toBeDefined();
    await expect(signOutSessions(keyfob(), accountId, first.session.id)).rejects.toMatchObject(refusal("unknown_session"));
    // Another account's session is not this account's to end.
    const other = await googleAccount();
    const theirs = await startSession(keyfob(), { accountId: other.accountId, identity: other.identity });
    await expect(signOutSessions(keyfob(), accountId, theirs.session.id)).rejects.toMatchObject(refusal("unknown_session"));
    expect(await findSession(keyfob(), theirs.token)).toBeDefined();

    expect(await signOutSessions(keyfob(), accountId, undefined)).toBe(2);
    expect(await findSession(keyfob(), second.token)).toBeUndefined();
    expect(await findSession(keyfob(), third.token)).toBeUndefined();
    expect((await accountOverview(keyfob(), accountId)).sessions).toEqual([]);
    expect((await auditEvents(accountId)).map((e) => e.detail)).toEqual([
      "signed out at /account: one session",
      "signed out everywhere at /account: 2 sessions",
    ]);
  });
});

describe("deleting the account", () => {
  it("deletes it with its identities and sessions and revokes its tokens, as the dashboard's delete does", async () => {
    const user = await activeUser();
    expect((await userinfo(user.tokens.access_token)).status).toBe(200);
    const deleted = await deleteOwnAccount(keyfob(), user.accountId, signedInNow("203.0.113.5"));
    expect(deleted).toMatchObject({ endedSessions: 1, identities: 2 });
    expect(await keyfob().store.accounts.find(user.accountId)).toBeUndefined();
    expect(await findSession(keyfob(), user.session.token)).toBeUndefined();
    await expectError(await userinfo(user.tokens.access_token), 401, "invalid_token");
    await expectError(await userinfo(user.walletTokens.access_token), 401, "invalid_token");
    expect(await auditEvents(user.accountId)).toContainEqual({
      action: "account.deleted",
      detail: expect.stringMatching(/^by its owner at \/account; 2 access tokens revoked, 1 sessions ended$/),
    });
    await expect(deleteOwnAccount(keyfob(), user.accountId, signedInNow())).rejects.toMatchObject(refusal("no_account"));
  });
});

describe("what a session's login may change", () => {
  const NAMES = { userName: "Keyfob account", displayName: "Keyfob account" };
  const MINUTE = 60_000;

  /** A Google account with a linked wallet and a passkey, and a login session of it that `login` describes. */
  async function accountWith(login: { contractSignature?: boolean; minutesAgo?: number } = {}) {
    const { accountId, identity, wallet } = await googleAccount(true);
    const passkey = await passkeyOf(accountId);
    const session = (
      await startSession(
        keyfob(),
        {
          accountId,
          // A smart account's login is a wallet's; any other way in will do for an old login.
          identity: login.contractSignature ? { provider: "web3", subject: wallet, emailVerified: false } : identity,
          contractSignature: login.contractSignature,
        },
        new Date(Date.now() - (login.minutesAgo ?? 0) * MINUTE),
      )
    ).session;
    const requester: SignedInRequester = { login: session, ip: "203.0.113.66" };
    return { accountId, identity, wallet, passkey, session, requester };
  }

  /** An attacker's own wallet, signing a link message with the account's link nonce. */
  async function linkMessage(accountId: string) {
    const attacker = privateKeyToAccount(generatePrivateKey());
    const message = createSiweMessage({
      domain: new URL(ISSUER).host,
      address: attacker.address,
      uri: ISSUER,
      version: "1",
      chainId: 1,
      nonce: accountLinkNonce(keyfob(), accountId),
      issuedAt: new Date(),
      resources: [SIWE_PURPOSE.linkWallet],
    });
    return { attacker, message, signature: await attacker.signMessage({ message }) };
  }

  /** The account's ways in and whether it exists, to show a refusal changed nothing. */
  const state = async (accountId: string) => ({
    exists: (await keyfob().store.accounts.find(accountId)) !== undefined,
    identities: (await keyfob().store.accounts.identities(accountId)).map((i) => `${i.provider}:${i.subject}`).sort(),
    passkeys: (await keyfob().store.accounts.passkeys(accountId)).map((p) => p.id),
  });

  async function refusals(accountId: string) {
    await keyfob().audit.flush();
    return tables(keyfob()).auditEvent.findMany({
      where: { accountId, outcome: { not: "success" } },
      orderBy: { id: "asc" },
      select: { action: true, outcome: true, ip: true, detail: true },
    });
  }

  it("a smart account's signature (the chain RPC's word) adds no way in, takes none away and deletes nothing", async () => {
    const { accountId, identity, wallet, passkey, session, requester } = await accountWith({ contractSignature: true });
    expect(session.amr).toEqual(["wallet", "contract"]);
    const before = await state(accountId);
    const refused = refusal("contract_session");

    // The review's attack: the attacker's own plain wallet, linked through the session the RPC vouched for.
    const { attacker, message, signature } = await linkMessage(accountId);
    await expect(verifyAccountLink(keyfob(), accountId, message, signature, requester)).rejects.toMatchObject(refused);
    expect(await keyfob().store.accounts.findIdentity({ provider: "web3", subject: attacker.address })).toBeUndefined();
    await expect(addPasskeyOptions(keyfob(), accountId, NAMES, requester)).rejects.toMatchObject(refused);
    // A passkey answer to options a strong login got, finished by the smart account's session.
    const answer = new SoftAuthenticator(ISSUER).create(await addPasskeyOptions(keyfob(), accountId, NAMES, signedInNow()));
    await expect(addPasskey(keyfob(), accountId, answer, requester)).rejects.toMatchObject(refused);
    await expect(
      removeWayIn(keyfob(), accountId, { identity: { provider: "google", subject: identity.subject } }, requester),
    ).rejects.toMatchObject(refused);
    await expect(removeWayIn(keyfob(), accountId, { passkey }, requester)).rejects.toMatchObject(refused);
    await expect(deleteOwnAccount(keyfob(), accountId, requester)).rejects.toMatchObject(refused);
    expect(await state(accountId)).toEqual(before);
    expect(before.identities).toContain(`web3:${wallet}`);

    // Each refusal audited under the action it refused, with how the session logged in: no message, signature or token.
    const audited = await refusals(accountId);
    expect(audited.map((e) => [e.action, e.outcome, e.ip])).toEqual([
      ["account.wallet_linked", "contract_session", "203.0.113.66"],
      ["account.passkey_added", "contract_session", "203.0.113.66"],
      ["account.passkey_added", "contract_session", "203.0.113.66"],
      ["account.identity_unlinked", "contract_session", "203.0.113.66"],
      ["account.passkey_removed", "contract_session", "203.0.113.66"],
      ["account.deleted", "contract_session", "203.0.113.66"],
    ]);
    for (const event of audited) expect(event.detail).toBe("refused at /account: login 0 minutes ago, amr wallet contract");
  });

  it("a login more than ten minutes old adds and removes no way in and deletes nothing, but renames and signs out", async () => {
    const { accountId, wallet, passkey, requester } = await accountWith({ minutesAgo: 11 });
    const before = await state(accountId);
    const refused = refusal("login_not_recent");

    await expect(removeWayIn(keyfob(), accountId, { identity: { provider: "web3", subject: wallet } }, requester)).rejects.toMatchObject(
      refused,
    );
    await expect(removeWayIn(keyfob(), accountId, { passkey }, requester)).rejects.toMatchObject(refused);
    await expect(deleteOwnAccount(keyfob(), accountId, requester)).rejects.toMatchObject(refused);
    // Adding too: a way in added from an old session would sign in anew at once, and then pass the rule.
    const { message, signature } = await linkMessage(accountId);
    await expect(verifyAccountLink(keyfob(), accountId, message, signature, requester)).rejects.toMatchObject(refused);
    await expect(addPasskeyOptions(keyfob(), accountId, NAMES, requester)).rejects.toMatchObject(refused);
    expect(await state(accountId)).toEqual(before);
    expect((await refusals(accountId)).map((e) => [e.action, e.outcome, e.detail])).toEqual([
      ["account.identity_unlinked", "login_not_recent", "refused at /account: login 11 minutes ago, amr google"],
      ["account.passkey_removed", "login_not_recent", "refused at /account: login 11 minutes ago, amr google"],
      ["account.deleted", "login_not_recent", "refused at /account: login 11 minutes ago, amr google"],
      ["account.wallet_linked", "login_not_recent", "refused at /account: login 11 minutes ago, amr google"],
      ["account.passkey_added", "login_not_recent", "refused at /account: login 11 minutes ago, amr google"],
    ]);

    // What gives an attacker nothing stays open: naming a passkey, signing sessions out.
    expect(await renamePasskey(keyfob(), accountId, passkey, "Old laptop", { ip: requester.ip })).toBe("Old laptop");
    const other = await startSession(keyfob(), { accountId, identity: { provider: "web3", subject: wallet, emailVerified: false } });
    expect(await signOutSessions(keyfob(), accountId, other.session.id, { ip: requester.ip })).toBe(1);
  });

  it("a login of the last ten minutes links, adds, unlinks, removes and deletes", async () => {
    const { accountId, wallet, passkey, requester } = await accountWith({ minutesAgo: 9 });
    const { attacker, message, signature } = await linkMessage(accountId);
    await expect(verifyAccountLink(keyfob(), accountId, message, signature, requester)).resolves.toBe(attacker.address);
    const answer = new SoftAuthenticator(ISSUER).create(await addPasskeyOptions(keyfob(), accountId, NAMES, requester));
    await addPasskey(keyfob(), accountId, answer, requester);
    await removeWayIn(keyfob(), accountId, { identity: { provider: "web3", subject: wallet } }, requester);
    await removeWayIn(keyfob(), accountId, { passkey }, requester);
    expect((await state(accountId)).passkeys).toHaveLength(1);
    await deleteOwnAccount(keyfob(), accountId, requester);
    expect((await state(accountId)).exists).toBe(false);
    expect(await refusals(accountId)).toEqual([]);
  });
});

describe("signing in at /account", () => {
  it("goes to the hosted login page as /account's own client, in the page's language, returning to /account/return", async () => {
    const url = new URL(await accountLoginUrl(keyfob(), "de"));
    expect(url.pathname).toBe("/auth");
    expect(Object.fromEntries(url.searchParams)).toMatchObject({
      client_id: "keyfob-account",
      redirect_uri: accountReturnUri(keyfob()),
      ui_locales: "de",
      code_challenge_method: "S256",
    });
    const start = await startAuthorization(keyfob(), url.searchParams);
    expect(start).toMatchObject({ kind: "login", clientName: "Keyfob account" });
    // Registering the client again (every sign-in does) changes nothing.
    expect(new URL(await accountLoginUrl(keyfob(), "en")).searchParams.get("client_id")).toBe("keyfob-account");
  });

  it("asks for a new login (max_age=0) when signing in again: the browser's session does not complete it", async () => {
    expect(new URL(await accountLoginUrl(keyfob(), "en")).searchParams.has("max_age")).toBe(false);
    const url = new URL(await accountLoginUrl(keyfob(), "en", { fresh: true }));
    expect(url.searchParams.get("max_age")).toBe("0");
    const { accountId, identity } = await googleAccount();
    const { session } = await startSession(keyfob(), { accountId, identity });
    const start = await startAuthorization(keyfob(), url.searchParams);
    if (start.kind !== "login") throw new Error("expected the login page");
    await expect(completeAuthorization(keyfob(), start.interactionId, { session })).rejects.toMatchObject(refusal("needs_new_login"));
  });
});
