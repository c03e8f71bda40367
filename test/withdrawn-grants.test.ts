/**
 * Incident response reaches grants not yet redeemed (security review, third round, item 2): a
 * device authorization approved on one instance, then the account blocked or deleted, the login
 * session ended at /session/end, or the approving wallet unlinked on another instance, gives the
 * device nothing at its next poll (access_denied), on the real route handlers and PostgreSQL. And
 * a code, a device code or a refresh token whose account was blocked or deleted while the grant
 * was outstanding is refused by the statement that would redeem it, as Flow A's is.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { linkWallet, resolveAccount, type LoginIdentity } from "@/lib/accounts/accounts";
import { removeWayIn } from "@/lib/accounts/self-service";
import { ALL_SCOPES } from "@/lib/admin/access";
import { runAdminChange } from "@/lib/admin/changes";
import { startAuthorization } from "@/lib/actions/authorize";
import { createClient, updateClient } from "@/lib/clients/registry";
import { loadConfig } from "@/lib/config";
import { confirmUserCode } from "@/lib/device/verification";
import { completeAuthorization } from "@/lib/interactions/interactions";
import { createKeyfob, type Keyfob } from "@/lib/keyfob";
import { keyfob } from "@/lib/runtime";
import { endSession } from "@/lib/sessions/login-session";
import { tables } from "./support/database";
import { ISSUER } from "./support/flow-a";
import { authorizeQuery, FORM, google, registerApp, token } from "./support/flow-b";
import { route } from "./support/routes";

const deviceAuthorizationRoute = route("/device/authorization");
const tokenRoute = route("/token");

/** The admins' instance: a second Keyfob on the same PostgreSQL, with its own pool and caches. */
let other: Keyfob;
beforeAll(() => {
  other = createKeyfob({ ...loadConfig(), recoveryThreads: 0 });
});
afterAll(() => other.close());

const admin = { accountId: "0x0000000000000000000000000000000000000001", label: "incident-test", scopes: ALL_SCOPES };

/** A public client allowed the device grant, with refresh tokens on devices. */
async function deviceClient() {
  const app = await createClient(keyfob().store, { name: "Set-top box" });
  await updateClient(keyfob().store, app.id, { deviceFlow: true, refreshTokensAllowed: true, deviceFlowOfflineAccess: true });
  return app.id;
}

async function startDevice(clientId: string) {
  const response = await deviceAuthorizationRoute(
    new Request(`${ISSUER}/device/authorization`, {
      method: "POST",
      headers: FORM,
      body: new URLSearchParams({ client_id: clientId, scope: "openid email offline_access" }),
    }),
  );
  expect(response.status).toBe(200);
  return (await response.json()) as { device_code: string; user_code: string };
}

async function poll(clientId: string, deviceCode: string) {
  const response = await tokenRoute(
    new Request(`${ISSUER}/token`, {
      method: "POST",
      headers: FORM,
      body: new URLSearchParams({
        grant_type: "urn:ietf:params:oauth:grant-type:device_code",
        device_code: deviceCode,
        client_id: clientId,
      }),
    }),
  );
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

/** A phone's address of its own for each approval: each entry of a code counts against its address's budget. */
let phones = 0;

/** The user approves the device on their phone with `identity`: the session token of that login. */
async function approve(userCode: string, identity: LoginIdentity) {
  const interactionId = await confirmUserCode(keyfob(), userCode, { ip: `198.18.40.${++phones}` });
  const { location, newSession } = await completeAuthorization(keyfob(), interactionId, { identity });
  expect(location).toBe("/device?result=approved");
  return newSession!.token;
}

/** Nothing was issued to the client: no access token, no refresh token. */
async function nothingIssued(clientId: string) {
  expect(await tables(keyfob()).issuedToken.count({ where: { clientId } })).toBe(0);
  expect(await tables(keyfob()).refreshToken.count({ where: { clientId } })).toBe(0);
}

describe("an approved device authorization the device has not redeemed", () => {
  it("ends when the account is blocked or deleted on another instance", async () => {
    for (const action of ["account.block", "account.delete"] as const) {
      const clientId = await deviceClient();
      const started = await startDevice(clientId);
      const identity = google();
      await approve(started.user_code, identity);
      const accountId = await resolveAccount(keyfob(), identity);
      expect(await runAdminChange(other, admin, action, { accountId })).toMatchObject({ ok: true });
      expect(await poll(clientId, started.device_code), action).toMatchObject({ status: 400, body: { error: "access_denied" } });
      await nothingIssued(clientId);
    }
  });

  it("ends when the login session that approved it ends (/session/end)", async () => {
    const clientId = await deviceClient();
    const started = await startDevice(clientId);
    const sessionToken = await approve(started.user_code, google());
    expect(await endSession(other, sessionToken)).toBe(true);
    expect(await poll(clientId, started.device_code)).toMatchObject({ status: 400, body: { error: "access_denied" } });
    await nothingIssued(clientId);
  });

  it("ends when the wallet that approved it is unlinked at /account", async () => {
    const clientId = await deviceClient();
    const started = await startDevice(clientId);
    // An account of a Google login with a wallet linked to it; the wallet approves the device.
    const owner = google();
    const app = await registerApp();
    const login = await startAuthorization(keyfob(), authorizeQuery(app));
    if (login.kind !== "login") throw new Error("expected the login page");
    await completeAuthorization(keyfob(), login.interactionId, { identity: owner });
    const accountId = await resolveAccount(keyfob(), owner);
    const wallet = privateKeyToAccount(generatePrivateKey()).address;
    await linkWallet(keyfob(), accountId, wallet);
    await approve(started.user_code, { provider: "web3", subject: wallet, emailVerified: false });
    await removeWayIn(
      other,
      accountId,
      { identity: { provider: "web3", subject: wallet } },
      { login: { amr: ["google"], authTime: new Date() } },
    );
    expect(await poll(clientId, started.device_code)).toMatchObject({ status: 400, body: { error: "access_denied" } });
    await nothingIssued(clientId);
  });

  it("is still redeemed when nothing happened to it", async () => {
    const clientId = await deviceClient();
    const started = await startDevice(clientId);
    await approve(started.user_code, google());
    const redeemed = await poll(clientId, started.device_code);
    expect(redeemed).toMatchObject({ status: 200, body: { access_token: expect.any(String), refresh_token: expect.any(String) } });
  });
});

describe("a grant whose account was blocked or deleted while it was outstanding", () => {
  // What blocking and deletion withdraw in their transaction is above; these change the rows
  // alone, as a block committing while the redeeming statement runs would leave them.
  const blockAlone = (accountId: string) => tables(keyfob()).account.update({ where: { id: accountId }, data: { blockedAt: new Date() } });
  const deleteAlone = (accountId: string) => tables(keyfob()).account.delete({ where: { id: accountId } });

  it("a device code is refused, and so is one whose approving session was revoked", async () => {
    for (const end of ["block", "delete", "session"] as const) {
      const clientId = await deviceClient();
      const started = await startDevice(clientId);
      const identity = google();
      const sessionToken = await approve(started.user_code, identity);
      const accountId = await resolveAccount(keyfob(), identity);
      if (end === "block") await blockAlone(accountId);
      if (end === "delete") await deleteAlone(accountId);
      if (end === "session") await tables(keyfob()).loginSession.updateMany({ where: { accountId }, data: { revokedAt: new Date() } });
      expect(await poll(clientId, started.device_code), end).toMatchObject({ status: 400, body: { error: "invalid_grant" } });
      await nothingIssued(clientId);
      expect(sessionToken).toEqual(expect.any(String));
    }
  });

  it("an authorization code is refused", async () => {
    for (const end of [blockAlone, deleteAlone]) {
      const app = await registerApp();
      const identity = google();
      const login = await startAuthorization(keyfob(), authorizeQuery(app));
      if (login.kind !== "login") throw new Error("expected the login page");
      const { location } = await completeAuthorization(keyfob(), login.interactionId, { identity });
      await end(await resolveAccount(keyfob(), identity));
      const refused = await token(app, { code: new URL(location).searchParams.get("code")!, code_verifier: app.pkce.verifier });
      expect(refused.status).toBe(400);
      expect(await refused.json()).toMatchObject({ error: "invalid_grant", error_description: expect.stringMatching(/account/) });
      expect(await tables(keyfob()).issuedToken.count({ where: { clientId: app.clientId } })).toBe(0);
    }
  });

  it("a refresh token is refused, and its family does not rotate", async () => {
    for (const end of [blockAlone, deleteAlone]) {
      const clientId = await deviceClient();
      const started = await startDevice(clientId);
      const identity = google();
      await approve(started.user_code, identity);
      const { body } = await poll(clientId, started.device_code);
      await end(await resolveAccount(keyfob(), identity));
      const refused = await tokenRoute(
        new Request(`${ISSUER}/token`, {
          method: "POST",
          headers: FORM,
          body: new URLSearchParams({ grant_type: "refresh_token", refresh_token: String(body.refresh_token), client_id: clientId }),
        }),
      );
      expect(refused.status).toBe(400);
      expect(await refused.json()).toMatchObject({ error: "invalid_grant", error_description: expect.stringMatching(/account/) });
      expect(await tables(keyfob()).refreshToken.count({ where: { clientId } })).toBe(1);
      expect(await tables(keyfob()).issuedToken.count({ where: { clientId } })).toBe(1);
    }
  });
});
