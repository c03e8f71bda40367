/**
 * Accounts as admins manage them, through the admin actions (lib/admin/changes.ts) on one
 * instance while another instance serves the account: search by address, email or id; block,
 * which takes effect at the other instance's next request (tokens, sessions, codes, logins);
 * revoking sessions one by one or all; deleting an account with everything it holds.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { resolveAccount } from "@/lib/accounts/accounts";
import { startAuthorization } from "@/lib/actions/authorize";
import { completeAuthorization } from "@/lib/interactions/interactions";
import { ALL_SCOPES, type Admin } from "@/lib/admin/access";
import { runAdminChange } from "@/lib/admin/changes";
import { getAccount, listAccounts, listActiveTokens, resolveAccountReference } from "@/lib/admin/operations";
import { loadConfig } from "@/lib/config";
import { createKeyfob, type Keyfob } from "@/lib/keyfob";
import { keyfob } from "@/lib/runtime";
import { opaqueDigest } from "@/lib/oauth/opaque";
import { findSession } from "@/lib/sessions/login-session";
import { expectError, requestChallenge, submit } from "./support/flow-a";
import { activeUser, authorizeQuery, token, userinfo } from "./support/flow-b";
import { tables } from "./support/database";

/** The admins' instance: a Keyfob of its own (own pool, own key cache), like a second server. */
let adminSide: Keyfob;
const admin: Admin = { accountId: "0x0000000000000000000000000000000000000001", label: "accounts-test", scopes: ALL_SCOPES };
beforeAll(() => {
  adminSide = createKeyfob({ ...loadConfig(), recoveryThreads: 0 });
});
afterAll(() => adminSide.close());

describe("finding accounts", () => {
  it("by its own address, a linked wallet's address (any case), an email (any case), or part of an id", async () => {
    const user = await activeUser();
    const ids = async (search: string) => (await listAccounts(adminSide, admin, { search })).items.map((a) => a.id);
    expect(await ids(user.accountId.toLowerCase())).toEqual([user.accountId]);
    expect(await ids(user.wallet.address.toLowerCase())).toEqual([user.accountId]);
    expect(await ids(user.identity.email!.toUpperCase())).toEqual([user.accountId]);
    // Part of an email, with or without its @: the start of the local part, the domain.
    const [local, domain] = user.identity.email!.split("@");
    expect(await ids(`${local.slice(0, -2)}`)).toContain(user.accountId);
    expect(await ids(`${local.slice(2).toUpperCase()}@${domain.slice(0, 3)}`)).toContain(user.accountId);
    expect(await ids(`@${domain}`)).toContain(user.accountId);
    expect(await ids(user.accountId.slice(2, 14))).toContain(user.accountId);
    expect(await ids("nobody-has-this@example.com")).toEqual([]);
    expect(await resolveAccountReference(adminSide, admin, user.wallet.address)).toEqual({ id: user.accountId });
    expect(await resolveAccountReference(adminSide, admin, user.identity.email!)).toEqual({ id: user.accountId });

    const shown = (await getAccount(adminSide, admin, user.accountId.toLowerCase()))!;
    expect(shown.identities.map((i) => i.provider).sort()).toEqual(["google", "web3"]);
    expect(shown.wallets).toEqual([{ address: user.wallet.address, own: false, linkedAt: expect.any(Date) }]);
    expect(shown.sessions.map((s) => s.id)).toEqual([opaqueDigest(user.session.token)]);
    // Its tokens include the linked wallet's Flow A token.
    expect(shown.holdings).toEqual({ accessTokens: 2, refreshGrants: 0 });
    expect((await listActiveTokens(adminSide, admin, { accountId: user.accountId })).items.map((t) => t.userId).sort()).toEqual(
      [user.accountId, user.wallet.address].sort(),
    );
  });
});

describe("blocking from the admins' instance", () => {
  it("takes effect at the serving instance's next request: tokens, session, logins; unblocking lets it log in again", async () => {
    const user = await activeUser();
    expect((await userinfo(user.tokens.access_token)).status).toBe(200);

    const blocked = await runAdminChange(adminSide, admin, "account.block", { accountId: user.accountId.toLowerCase() });
    expect(blocked).toEqual({ ok: true, value: { revokedTokens: 2, revokedSessions: 1 } });
    // The serving instance, next request.
    await expectError(await userinfo(user.tokens.access_token), 401, "invalid_token");
    await expectError(await userinfo(user.walletTokens.access_token), 401, "invalid_token");
    expect(await findSession(keyfob(), user.session.token)).toBeUndefined();
    const again = await startAuthorization(keyfob(), authorizeQuery(user.app));
    if (again.kind !== "login") throw new Error("expected the login page");
    await expect(completeAuthorization(keyfob(), again.interactionId, { identity: user.identity })).rejects.toMatchObject({
      code: "access_denied",
    });
    const refused = await requestChallenge(user.license, { address: user.wallet.address });
    await expectError(
      await submit(user.license, refused.state, await user.wallet.signMessage({ message: refused.challenge })),
      400,
      "invalid_grant",
    );

    const event = await tables(adminSide).auditEvent.findFirstOrThrow({ where: { action: "account.blocked", accountId: user.accountId } });
    expect(event).toMatchObject({
      actor: "accounts-test",
      outcome: "success",
      detail: "blocked: false -> true; 2 access tokens and 1 sessions revoked, refresh tokens and codes with them",
    });

    expect(await runAdminChange(adminSide, admin, "account.unblock", { accountId: user.accountId })).toMatchObject({ ok: true });
    const back = await startAuthorization(keyfob(), authorizeQuery(user.app));
    if (back.kind !== "login") throw new Error("expected the login page");
    expect((await completeAuthorization(keyfob(), back.interactionId, { identity: user.identity })).location).toContain("code=");
  });

  it("refuses an unknown account with a field error, and audits why", async () => {
    const nobody = privateKeyToAccount(generatePrivateKey()).address;
    expect(await runAdminChange(adminSide, admin, "account.block", { accountId: nobody })).toMatchObject({
      ok: false,
      status: 400,
      fieldErrors: { accountId: `no account with id ${nobody}` },
    });
    expect(await runAdminChange(adminSide, admin, "account.block", { accountId: "" })).toMatchObject({
      ok: false,
      fieldErrors: { accountId: "required" },
    });
    const events = await tables(adminSide).auditEvent.findMany({ where: { action: "account.blocked", accountId: nobody } });
    expect(events.map((e) => [e.outcome, e.detail])).toEqual([["rejected", `accountId: no account with id ${nobody}`]]);
  });
});

describe("sessions and deletion", () => {
  it("revokes one session or all of them, at the serving instance's next request", async () => {
    const user = await activeUser();
    const second = await startAuthorization(keyfob(), authorizeQuery(user.app));
    if (second.kind !== "login") throw new Error("expected the login page");
    const other = (await completeAuthorization(keyfob(), second.interactionId, { identity: user.identity })).newSession!;
    expect((await getAccount(adminSide, admin, user.accountId))!.sessions).toHaveLength(2);

    expect(
      await runAdminChange(adminSide, admin, "session.revoke", { accountId: user.accountId, sessionId: opaqueDigest(user.session.token) }),
    ).toEqual({ ok: true, value: { revoked: 1 } });
    expect(await findSession(keyfob(), user.session.token)).toBeUndefined();
    expect(await findSession(keyfob(), other.token)).toBeDefined();
    expect(await runAdminChange(adminSide, admin, "session.revoke", { accountId: user.accountId })).toEqual({
      ok: true,
      value: { revoked: 1 },
    });
    expect(await findSession(keyfob(), other.token)).toBeUndefined();
    // Tokens are left alone by a session revocation.
    expect((await userinfo(user.tokens.access_token)).status).toBe(200);
  });

  it("deletes an account with its identities and sessions, revoking its tokens; the wallet's next login makes a new account", async () => {
    const user = await activeUser();
    await tables(adminSide).adminRole.create({ data: { accountId: user.accountId, grantedBy: "test" } });
    expect(await runAdminChange(adminSide, admin, "account.delete", { accountId: user.accountId })).toEqual({
      ok: true,
      value: { revokedTokens: 2, endedSessions: 1 },
    });
    expect(await tables(adminSide).account.findUnique({ where: { id: user.accountId } })).toBeNull();
    expect(await tables(adminSide).identity.count({ where: { accountId: user.accountId } })).toBe(0);
    expect(await tables(adminSide).adminRole.findUnique({ where: { accountId: user.accountId } })).toBeNull();
    await expectError(await userinfo(user.tokens.access_token), 401, "invalid_token");
    await expectError(await userinfo(user.walletTokens.access_token), 401, "invalid_token");
    expect(await findSession(keyfob(), user.session.token)).toBeUndefined();
    await expectError(await token(user.app, { code: "x".repeat(43) }), 400, "invalid_grant");
    const event = await tables(adminSide).auditEvent.findFirstOrThrow({ where: { action: "account.deleted", accountId: user.accountId } });
    expect(event.detail).toContain(`"web3:${user.wallet.address}"`);
    expect(await runAdminChange(adminSide, admin, "account.delete", { accountId: user.accountId })).toMatchObject({
      ok: false,
      fieldErrors: { accountId: expect.stringMatching(/no account/) },
    });
    // Not a block: the Google identity's next login gets a new account.
    expect(await resolveAccount(keyfob(), user.identity)).not.toBe(user.accountId);
  });
});
