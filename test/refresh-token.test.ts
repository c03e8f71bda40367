/**
 * Refresh tokens (OpenID Connect Core 11 offline_access, RFC 6749 6, RFC 9700 4.14) on the real
 * route handlers and a real PostgreSQL: issuance with the code exchange (only with offline_access,
 * only to clients an admin allowed), rotation on every use, reuse detection revoking the family and
 * its access tokens, single use under concurrency, narrowing scope, idle and absolute expiry,
 * refusal when the client is disabled or no longer allowed, revocation (RFC 7009) and
 * introspection (RFC 7662), Flow A left as it was, the dashboard's listing and revocation through
 * the admin actions, and the sweep of expired families.
 */
import { createHash, randomBytes } from "node:crypto";
import { ALL_SCOPES } from "@/lib/admin/access";
import { createLocalJWKSet, decodeJwt, jwtVerify, type JSONWebKeySet } from "jose";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LoginIdentity } from "@/lib/accounts/accounts";
import { startAuthorization } from "@/lib/actions/authorize";
import { completeAuthorization } from "@/lib/interactions/interactions";
import { performAdminChange } from "@/lib/admin/changes";
import { listRefreshGrants } from "@/lib/admin/operations";
import { beginAdminLogin, finishAdminLogin } from "@/lib/admin/session";
import { addRedirectUri, createClient, rotateClientSecret, setClientEnabled, updateClient } from "@/lib/clients/registry";
import { loadConfig } from "@/lib/config";
import { rawConnection, type Store } from "@/lib/store";
import type { Database } from "@/lib/store/connection";
import { sweepExpired } from "@/lib/housekeeping";
import { createKeyfob, type Keyfob } from "@/lib/keyfob";
import { opaqueDigest } from "@/lib/oauth/opaque";
import { parseScope } from "@/lib/oauth/scope";
import { keyfob } from "@/lib/runtime";
import { tables, isolatedDatabase } from "./support/database";
import { expectError, ISSUER, registerLicense, requestChallenge, submit } from "./support/flow-a";
import { route, serveRequest } from "./support/routes";

const introspectRoute = route("/token/introspect");
const keysRoute = route("/keys");
const revokeRoute = route("/token/revoke");
const tokenRoute = route("/token");
const userinfoGet = route("/userinfo");

const FORM = { "content-type": "application/x-www-form-urlencoded" };
const OFFLINE = "openid email offline_access";
let jwks: ReturnType<typeof createLocalJWKSet>;

beforeAll(async () => {
  jwks = createLocalJWKSet((await (await keysRoute(new Request("http://localhost/keys"))).json()) as JSONWebKeySet);
});

type App = { clientId: string; redirectUri: string; secret?: string; verifier: string; challenge: string };
type Tokens = { access_token: string; token_type: string; expires_in: number; id_token: string; refresh_token?: string; scope?: string };

/** A client, allowed refresh tokens unless told otherwise; public unless `confidential`. */
async function registerApp(options: { confidential?: boolean; refreshTokens?: boolean } = {}): Promise<App> {
  const client = await createClient(keyfob().store, { name: "Offline app" });
  const redirectUri = `https://offline.example.com/cb/${client.id.slice(3, 11)}`;
  await addRedirectUri(keyfob().store, client.id, redirectUri);
  if (options.refreshTokens !== false) await updateClient(keyfob().store, client.id, { refreshTokensAllowed: true });
  const secret = options.confidential ? await rotateClientSecret(keyfob(), client.id) : undefined;
  const verifier = randomBytes(32).toString("base64url");
  return { clientId: client.id, redirectUri, secret, verifier, challenge: createHash("sha256").update(verifier).digest("base64url") };
}

const google = (subject = randomBytes(8).toString("hex")): LoginIdentity => ({
  provider: "google",
  subject,
  email: `${subject}@example.com`,
  emailVerified: true,
});

/** The authorization request and a fresh login of `identity`: the code. */
async function code(app: App, scope = OFFLINE, identity = google()): Promise<string> {
  const query = new URLSearchParams({
    client_id: app.clientId,
    redirect_uri: app.redirectUri,
    response_type: "code",
    scope,
    state: "s",
    nonce: "n-1",
  });
  if (!app.secret) {
    query.set("code_challenge", app.challenge);
    query.set("code_challenge_method", "S256");
  }
  const start = await startAuthorization(keyfob(), query);
  if (start.kind !== "login") throw new Error(`expected the login page, got ${JSON.stringify(start)}`);
  const { location } = await completeAuthorization(keyfob(), start.interactionId, { identity });
  const value = new URL(location).searchParams.get("code");
  if (!value) throw new Error(`no code in ${location}`);
  return value;
}

function post(app: App, params: Record<string, string>, auth: "basic" | "post" | "none" = app.secret ? "basic" : "none") {
  const headers: Record<string, string> = { ...FORM };
  const form = new URLSearchParams(params);
  if (auth === "basic")
    headers.authorization = `Basic ${Buffer.from(`${encodeURIComponent(app.clientId)}:${encodeURIComponent(app.secret!)}`).toString("base64")}`;
  else form.set("client_id", app.clientId);
  if (auth === "post") form.set("client_secret", app.secret!);
  return tokenRoute(new Request(`${ISSUER}/token`, { method: "POST", headers, body: form }));
}

const exchangeResponse = (app: App, value: string) =>
  post(app, {
    grant_type: "authorization_code",
    code: value,
    redirect_uri: app.redirectUri,
    ...(app.secret ? {} : { code_verifier: app.verifier }),
  });

async function exchange(app: App, value: string): Promise<Tokens> {
  const response = await exchangeResponse(app, value);
  expect(response.status).toBe(200);
  return response.json();
}

const refreshResponse = (app: App, refreshToken: string, extra: Record<string, string> = {}, auth?: "basic" | "post" | "none") =>
  post(app, { grant_type: "refresh_token", refresh_token: refreshToken, ...extra }, auth);

async function refresh(app: App, refreshToken: string, extra: Record<string, string> = {}): Promise<Tokens> {
  const response = await refreshResponse(app, refreshToken, extra);
  if (response.status !== 200) throw new Error(`refresh: ${response.status} ${await response.text()}`);
  expect(response.headers.get("cache-control")).toBe("no-store");
  return response.json();
}

const userinfo = (accessToken: string) =>
  userinfoGet(new Request(`${ISSUER}/userinfo`, { headers: { authorization: `Bearer ${accessToken}` } }));
const row = (refreshToken: string) => tables(keyfob()).refreshToken.findUniqueOrThrow({ where: { tokenHash: opaqueDigest(refreshToken) } });
const jti = (accessToken: string) => decodeJwt(accessToken).jti as string;

const revoke = (app: App, token: string, hint?: string) =>
  revokeRoute(
    new Request(`${ISSUER}/token/revoke`, {
      method: "POST",
      headers: app.secret ? { ...FORM, authorization: `Basic ${Buffer.from(`${app.clientId}:${app.secret}`).toString("base64")}` } : FORM,
      body: new URLSearchParams({ ...(app.secret ? {} : { client_id: app.clientId }), token, ...(hint && { token_type_hint: hint }) }),
    }),
  );
const introspect = async (caller: App, token: string, hint?: string) => {
  const response = await introspectRoute(
    new Request(`${ISSUER}/token/introspect`, {
      method: "POST",
      headers: { ...FORM, authorization: `Basic ${Buffer.from(`${caller.clientId}:${caller.secret}`).toString("base64")}` },
      body: new URLSearchParams({ token, ...(hint && { token_type_hint: hint }) }),
    }),
  );
  expect(response.status).toBe(200);
  return response.json();
};

describe("issuance with the code exchange", () => {
  it("returns a refresh token with offline_access to an allowed client, stored only as its SHA-256, the first of a family", async () => {
    const app = await registerApp();
    const before = Date.now();
    const tokens = await exchange(app, await code(app));
    expect(Object.keys(tokens)).toEqual(["access_token", "token_type", "expires_in", "id_token", "refresh_token"]);
    expect(tokens.refresh_token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(decodeJwt(tokens.access_token).scope).toBe(OFFLINE);
    const stored = await row(tokens.refresh_token!);
    expect(stored).toMatchObject({ clientId: app.clientId, scope: OFFLINE, usedAt: null, revokedAt: null });
    expect(JSON.stringify(stored)).not.toContain(tokens.refresh_token);
    // REFRESH_TOKEN_IDLE_TTL 30 days, REFRESH_TOKEN_MAX_AGE 365 days by default.
    expect(Math.abs(stored.expiresAt.getTime() - (before + 30 * 86400_000))).toBeLessThan(10_000);
    expect(Math.abs(stored.familyExpiresAt.getTime() - (before + 365 * 86400_000))).toBeLessThan(10_000);
    const issued = await tables(keyfob()).issuedToken.findUniqueOrThrow({ where: { jti: jti(tokens.access_token) } });
    expect(issued.refreshFamily).toBe(stored.familyId);
  });

  it("gives no refresh token without offline_access, even to an allowed client", async () => {
    const app = await registerApp();
    const tokens = await exchange(app, await code(app, "openid email"));
    expect(Object.keys(tokens)).toEqual(["access_token", "token_type", "expires_in", "id_token"]);
    expect(await tables(keyfob()).refreshToken.count({ where: { clientId: app.clientId } })).toBe(0);
    // The same client asking for it gets one.
    expect((await exchange(app, await code(app))).refresh_token).toBeTruthy();
    expect(await tables(keyfob()).refreshToken.count({ where: { clientId: app.clientId } })).toBe(1);
  });

  it("drops offline_access for a client not allowed refresh tokens, and says so in scope: the login does not fail", async () => {
    const app = await registerApp({ refreshTokens: false });
    const tokens = await exchange(app, await code(app));
    expect(Object.keys(tokens)).toEqual(["access_token", "token_type", "expires_in", "id_token", "scope"]);
    expect(tokens.scope).toBe("openid email");
    expect(decodeJwt(tokens.access_token).scope).toBe("openid email");
    expect(await tables(keyfob()).refreshToken.count({ where: { clientId: app.clientId } })).toBe(0);
    expect((await userinfo(tokens.access_token)).status).toBe(200);
  });

  it("revokes the refresh family with the rest when the authorization code is reused", async () => {
    const app = await registerApp();
    const value = await code(app);
    const first = await exchange(app, value);
    const second = await refresh(app, first.refresh_token!);
    expect((await userinfo(second.access_token)).status).toBe(200);
    await expectError(await exchangeResponse(app, value), 400, "invalid_grant");
    for (const accessToken of [first.access_token, second.access_token])
      await expectError(await userinfo(accessToken), 401, "invalid_token");
    await expectError(await refreshResponse(app, second.refresh_token!), 400, "invalid_grant");
    expect((await row(second.refresh_token!)).revokedAt).not.toBeNull();
  });
});

describe("grant_type=refresh_token", () => {
  it("issues new tokens and a new refresh token on every use, with the claims of the login (auth_time, amr, sid, no nonce)", async () => {
    const app = await registerApp();
    const identity = google();
    const first = await exchange(app, await code(app, OFFLINE, identity));
    const { payload: original } = await jwtVerify(first.id_token, jwks, { issuer: ISSUER, audience: app.clientId });
    expect(original.nonce).toBe("n-1");

    const second = await refresh(app, first.refresh_token!);
    expect(Object.keys(second)).toEqual(["access_token", "token_type", "expires_in", "id_token", "refresh_token"]);
    expect(second.refresh_token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(second.refresh_token).not.toBe(first.refresh_token);
    const { payload: renewed } = await jwtVerify(second.id_token, jwks, { issuer: ISSUER, audience: app.clientId });
    expect(renewed).toMatchObject({
      sub: original.sub,
      email: identity.email,
      email_verified: true,
      provider_id: "google",
      auth_time: original.auth_time,
      amr: original.amr,
      // The login session's sid, as in the first ID token (Back-Channel Logout 1.0 2.4).
      sid: original.sid,
    });
    expect(original.auth_time).toEqual(expect.any(Number));
    expect(original.sid).toEqual(expect.any(String));
    expect(renewed.nonce).toBeUndefined();
    expect(renewed.jti).not.toBe(original.jti);
    const access = decodeJwt(second.access_token);
    expect(access).toMatchObject({ sub: original.sub, client_id: app.clientId, scope: OFFLINE });
    expect(await (await userinfo(second.access_token)).json()).toMatchObject({ sub: original.sub, email: identity.email });

    const [used, successor] = await Promise.all([row(first.refresh_token!), row(second.refresh_token!)]);
    expect(used.usedAt).not.toBeNull();
    expect(successor).toMatchObject({
      familyId: used.familyId,
      usedAt: null,
      scope: OFFLINE,
      familyExpiresAt: used.familyExpiresAt,
      authTime: used.authTime,
    });
    expect((await tables(keyfob()).issuedToken.findUniqueOrThrow({ where: { jti: jti(second.access_token) } })).refreshFamily).toBe(
      used.familyId,
    );
    // The first access token stays valid: rotation is not revocation.
    expect((await userinfo(first.access_token)).status).toBe(200);
    // And the chain goes on.
    const third = await refresh(app, second.refresh_token!);
    expect(decodeJwt(third.access_token).sub).toBe(original.sub);
    expect(decodeJwt(third.id_token).sid).toBe(original.sid);
  });

  it("authenticates confidential clients as the code exchange does", async () => {
    const app = await registerApp({ confidential: true });
    const tokens = await exchange(app, await code(app));
    await expectError(await refreshResponse(app, tokens.refresh_token!, {}, "none"), 401, "invalid_client");
    await expectError(await refreshResponse({ ...app, secret: "wrong" }, tokens.refresh_token!, {}, "basic"), 401, "invalid_client");
    const viaPost = await refreshResponse(app, tokens.refresh_token!, {}, "post");
    expect(viaPost.status).toBe(200); // the refusals did not consume it
    const viaBasic = await refreshResponse(app, (await viaPost.json()).refresh_token, {}, "basic");
    expect(viaBasic.status).toBe(200);
  });

  it("refuses a missing, malformed or unknown refresh token, and another client's without touching it", async () => {
    const app = await registerApp();
    const other = await registerApp();
    const tokens = await exchange(app, await code(app));
    await expectError(await post(app, { grant_type: "refresh_token" }), 400, "invalid_request");
    await expectError(await refreshResponse(app, "not-a-refresh-token"), 400, "invalid_grant");
    await expectError(await refreshResponse(app, randomBytes(32).toString("base64url")), 400, "invalid_grant");
    await expectError(await refreshResponse(other, tokens.refresh_token!), 400, "invalid_grant");
    expect((await row(tokens.refresh_token!)).usedAt).toBeNull();
    expect((await userinfo(tokens.access_token)).status).toBe(200);
    expect((await refreshResponse(app, tokens.refresh_token!)).status).toBe(200);
  });

  it("revokes the whole family and its access tokens when a used refresh token comes back, and audits it", async () => {
    const app = await registerApp();
    const first = await exchange(app, await code(app));
    const second = await refresh(app, first.refresh_token!);
    const third = await refresh(app, second.refresh_token!);
    const { familyId, accountId } = await row(first.refresh_token!);

    const body = await expectError(await refreshResponse(app, first.refresh_token!), 400, "invalid_grant");
    expect(body.error_description).toMatch(/already been used/);
    for (const tokens of [first, second, third]) await expectError(await userinfo(tokens.access_token), 401, "invalid_token");
    await expectError(await refreshResponse(app, third.refresh_token!), 400, "invalid_grant");
    const family = await tables(keyfob()).refreshToken.findMany({ where: { familyId } });
    expect(family).toHaveLength(3);
    expect(family.every((t) => t.revokedAt !== null)).toBe(true);
    const access = await tables(keyfob()).issuedToken.findMany({ where: { refreshFamily: familyId } });
    expect(access).toHaveLength(3);
    expect(access.every((t) => t.revokedAt !== null)).toBe(true);

    const event = await tables(keyfob()).auditEvent.findFirstOrThrow({ where: { action: "refresh_token.reused", clientId: app.clientId } });
    expect(event).toMatchObject({ outcome: "invalid_grant", accountId });
    expect(event.detail).toContain(familyId);
  });

  it("lets exactly one of 20 concurrent uses of a refresh token succeed; the others are reuse and revoke the family", async () => {
    const app = await registerApp();
    const tokens = await exchange(app, await code(app));
    const responses = await Promise.all(Array.from({ length: 20 }, () => refreshResponse(app, tokens.refresh_token!)));
    const succeeded = responses.filter((r) => r.status === 200);
    expect(succeeded).toHaveLength(1);
    for (const r of responses.filter((r) => r.status !== 200)) expect((await r.json()).error).toBe("invalid_grant");
    const { familyId } = await row(tokens.refresh_token!);
    // One successor only: the statement that used the token stored it.
    expect(await tables(keyfob()).refreshToken.count({ where: { familyId } })).toBe(2);
    // A client must not send one refresh token twice: the losers were reuse, so the winner's tokens are revoked too.
    const winner = (await succeeded[0].json()) as Tokens;
    await expectError(await userinfo(winner.access_token), 401, "invalid_token");
    await expectError(await refreshResponse(app, winner.refresh_token!), 400, "invalid_grant");
  });

  it("narrows the scope when asked, keeps the original scope in the new refresh token, and refuses widening", async () => {
    const app = await registerApp();
    const first = await exchange(app, await code(app));
    await expectError(await refreshResponse(app, first.refresh_token!, { scope: "openid email profile" }), 400, "invalid_scope");
    await expectError(await refreshResponse(app, first.refresh_token!, { scope: "openid admin" }), 400, "invalid_scope");
    await expectError(await refreshResponse(app, first.refresh_token!, { scope: "email" }), 400, "invalid_scope");
    expect((await row(first.refresh_token!)).usedAt).toBeNull(); // refusals do not use it

    const narrow = await refresh(app, first.refresh_token!, { scope: "openid" });
    expect(narrow.scope).toBeUndefined(); // what was asked is what was granted (RFC 6749 5.1)
    expect(narrow.refresh_token).toBeTruthy();
    expect(decodeJwt(narrow.access_token).scope).toBe("openid");
    const { payload } = await jwtVerify(narrow.id_token, jwks);
    expect(payload.email).toBeUndefined();
    expect(await (await userinfo(narrow.access_token)).json()).not.toHaveProperty("email");
    expect((await row(narrow.refresh_token!)).scope).toBe(OFFLINE);

    const again = await refresh(app, narrow.refresh_token!);
    expect(decodeJwt(again.access_token).scope).toBe(OFFLINE);
  });

  it("refuses a refresh token past its idle end or its family's end, and caps a successor at the family's end", async () => {
    const app = await registerApp();
    const db = tables(keyfob());
    const idle = await exchange(app, await code(app));
    await db.refreshToken.update({
      where: { tokenHash: opaqueDigest(idle.refresh_token!) },
      data: { expiresAt: new Date(Date.now() - 1000) },
    });
    expect((await expectError(await refreshResponse(app, idle.refresh_token!), 400, "invalid_grant")).error_description).toMatch(/expired/);
    expect((await userinfo(idle.access_token)).status).toBe(200); // expiry is not reuse: nothing is revoked

    const absolute = await exchange(app, await code(app));
    await db.refreshToken.update({
      where: { tokenHash: opaqueDigest(absolute.refresh_token!) },
      data: { familyExpiresAt: new Date(Date.now() - 1000) },
    });
    await expectError(await refreshResponse(app, absolute.refresh_token!), 400, "invalid_grant");

    const capped = await exchange(app, await code(app));
    const end = new Date(Math.floor(Date.now() / 1000) * 1000 + 3600_000);
    await db.refreshToken.update({ where: { tokenHash: opaqueDigest(capped.refresh_token!) }, data: { familyExpiresAt: end } });
    const next = await refresh(app, capped.refresh_token!);
    expect((await row(next.refresh_token!)).expiresAt).toEqual(end);
  });

  it("refuses when the client is disabled or no longer allowed refresh tokens, and works again once it is", async () => {
    const app = await registerApp();
    const tokens = await exchange(app, await code(app));
    await setClientEnabled(keyfob().store, app.clientId, false);
    await expectError(await refreshResponse(app, tokens.refresh_token!), 401, "invalid_client");
    await setClientEnabled(keyfob().store, app.clientId, true);
    await updateClient(keyfob().store, app.clientId, { refreshTokensAllowed: false });
    await expectError(await refreshResponse(app, tokens.refresh_token!), 400, "unauthorized_client");
    expect((await row(tokens.refresh_token!)).usedAt).toBeNull();
    await updateClient(keyfob().store, app.clientId, { refreshTokensAllowed: true });
    expect((await refreshResponse(app, tokens.refresh_token!)).status).toBe(200);
  });
});

describe("REFRESH_TOKEN_REUSE_GRACE", () => {
  /** Two instances on their own connections, 10 s of grace, sharing a clock the test sets. */
  let time = Date.now();
  const clock = { now: () => new Date(time) };
  let a: Keyfob;
  let b: Keyfob;
  beforeAll(async () => {
    const config = { ...keyfob().config, refreshTokenReuseGrace: 10, recoveryThreads: 0 };
    [a, b] = [createKeyfob(config, undefined, { clock }), createKeyfob(config, undefined, { clock })];
    await Promise.all([a.keys.refresh(), b.keys.refresh()]);
  });
  afterAll(() => Promise.all([a.close(), b.close()]));

  const refreshOn = (k: Keyfob, app: App, refreshToken: string) =>
    serveRequest(
      new Request(`${ISSUER}/token`, {
        method: "POST",
        headers: FORM,
        body: new URLSearchParams({ grant_type: "refresh_token", refresh_token: refreshToken, client_id: app.clientId }),
      }),
      k,
    );
  const refreshedOn = async (k: Keyfob, app: App, refreshToken: string): Promise<Tokens> => {
    const response = await refreshOn(k, app, refreshToken);
    if (response.status !== 200) throw new Error(`refresh: ${response.status} ${await response.text()}`);
    return response.json();
  };

  it("defaults to 0: a used refresh token presented again, even at the same instant, revokes its family", async () => {
    expect(loadConfig(process.env).refreshTokenReuseGrace).toBe(0);
    expect(() => loadConfig({ ...process.env, REFRESH_TOKEN_REUSE_GRACE: "2m" })).toThrow(/REFRESH_TOKEN_REUSE_GRACE/);
    const app = await registerApp();
    const first = await exchange(app, await code(app));
    const still = createKeyfob({ ...keyfob().config, recoveryThreads: 0 }, keyfob().store, { clock });
    time = Date.now();
    await refreshedOn(still, app, first.refresh_token!);
    await expectError(await refreshOn(still, app, first.refresh_token!), 400, "invalid_grant");
    expect((await row(first.refresh_token!)).revokedAt).not.toBeNull();
    await still.close();
  });

  it("answers a use within the window with the same successor and a new access token; after it, reuse revokes the family", async () => {
    const app = await registerApp();
    const first = await exchange(app, await code(app));
    time = Date.now();
    const foreground = await refreshedOn(a, app, first.refresh_token!);
    time += 9_000;
    const background = await refreshedOn(b, app, first.refresh_token!);
    expect(background.refresh_token).toBe(foreground.refresh_token);
    expect(jti(background.access_token)).not.toBe(jti(foreground.access_token));
    for (const tokens of [foreground, background]) expect((await userinfo(tokens.access_token)).status).toBe(200);
    const { familyId } = await row(first.refresh_token!);
    expect(await tables(keyfob()).refreshToken.count({ where: { familyId } })).toBe(2);
    const issued = await tables(keyfob()).issuedToken.findUniqueOrThrow({ where: { jti: jti(background.access_token) } });
    expect(issued.refreshFamily).toBe(familyId);
    const audited = { action: "token.issued", clientId: app.clientId, detail: { contains: "reused within REFRESH_TOKEN_REUSE_GRACE" } };
    expect(await tables(keyfob()).auditEvent.count({ where: audited })).toBe(1);

    time += 1_000; // 10 s after the first use: the window is over
    const body = await expectError(await refreshOn(b, app, first.refresh_token!), 400, "invalid_grant");
    expect(body.error_description).toMatch(/already been used/);
    for (const tokens of [foreground, background]) await expectError(await userinfo(tokens.access_token), 401, "invalid_token");
    await expectError(await refreshOn(a, app, foreground.refresh_token!), 400, "invalid_grant");
    expect(await tables(keyfob()).auditEvent.count({ where: { action: "refresh_token.reused", clientId: app.clientId } })).toBe(1);
  });

  it("revokes the family when the successor was used already, even within the window", async () => {
    const app = await registerApp();
    const first = await exchange(app, await code(app));
    time = Date.now();
    const second = await refreshedOn(a, app, first.refresh_token!);
    const third = await refreshedOn(a, app, second.refresh_token!);
    await expectError(await refreshOn(b, app, first.refresh_token!), 400, "invalid_grant");
    await expectError(await refreshOn(a, app, third.refresh_token!), 400, "invalid_grant");
  });

  it("gives uses racing on two instances one successor, and answers each with it", async () => {
    const app = await registerApp();
    const first = await exchange(app, await code(app));
    time = Date.now();
    const answers = await Promise.all([a, b, a, b].map((k) => refreshedOn(k, app, first.refresh_token!)));
    expect(new Set(answers.map((tokens) => tokens.refresh_token)).size).toBe(1);
    expect(new Set(answers.map((tokens) => jti(tokens.access_token))).size).toBe(4);
    const { familyId } = await row(first.refresh_token!);
    expect(await tables(keyfob()).refreshToken.count({ where: { familyId } })).toBe(2);
    for (const tokens of answers) expect((await userinfo(tokens.access_token)).status).toBe(200);
    // The one successor goes on, once.
    expect((await refreshOn(b, app, answers[0].refresh_token!)).status).toBe(200);
  });
});

describe("revocation and introspection of refresh tokens", () => {
  it("revokes a refresh token's family at /token/revoke, with or without token_type_hint (a hint only)", async () => {
    const app = await registerApp();
    const other = await registerApp();
    for (const hint of [undefined, "refresh_token", "access_token"]) {
      const first = await exchange(app, await code(app));
      const second = await refresh(app, first.refresh_token!);
      // Another client's revocation changes nothing.
      expect(await (await revoke(other, second.refresh_token!, hint)).json()).toEqual({});
      expect((await row(second.refresh_token!)).revokedAt).toBeNull();

      const response = await revoke(app, second.refresh_token!, hint);
      expect([response.status, await response.json()]).toEqual([200, {}]);
      await expectError(await refreshResponse(app, second.refresh_token!), 400, "invalid_grant");
      for (const accessToken of [first.access_token, second.access_token])
        await expectError(await userinfo(accessToken), 401, "invalid_token");
    }
  });

  it("revokes an access token with either hint, leaving its refresh token usable", async () => {
    const app = await registerApp();
    const tokens = await exchange(app, await code(app));
    expect((await revoke(app, tokens.access_token, "refresh_token")).status).toBe(200);
    await expectError(await userinfo(tokens.access_token), 401, "invalid_token");
    expect((await refreshResponse(app, tokens.refresh_token!)).status).toBe(200);
  });

  it("introspects refresh tokens: active for the client's own or a resource server, inactive once used or revoked", async () => {
    const app = await registerApp({ confidential: true });
    const other = await registerApp({ confidential: true });
    const tokens = await exchange(app, await code(app));
    const stored = await row(tokens.refresh_token!);
    const { payload } = await jwtVerify(tokens.id_token, jwks);

    // No token_type: RFC 7662 2.2's is an access token's type (RFC 6749 7.1), which a refresh token is not.
    const own = await introspect(app, tokens.refresh_token!);
    expect(own).toEqual({
      active: true,
      client_id: app.clientId,
      scope: OFFLINE,
      sub: payload.sub,
      iss: ISSUER,
      iat: Math.floor(stored.issuedAt.getTime() / 1000),
      exp: Math.floor(stored.expiresAt.getTime() / 1000),
    });
    expect(await introspect(app, tokens.refresh_token!, "refresh_token")).toEqual(own);
    expect(await introspect(app, tokens.refresh_token!, "access_token")).toEqual(own);
    expect(await introspect(app, tokens.access_token, "refresh_token")).toMatchObject({ active: true, token_type: "Bearer" });
    // Another client's, unless it is a resource server (RFC 7662 4).
    expect(await introspect(other, tokens.refresh_token!)).toEqual({ active: false });
    await updateClient(keyfob().store, other.clientId, { resourceServer: true });
    expect(await introspect(other, tokens.refresh_token!)).toMatchObject({ active: true, client_id: app.clientId });

    const next = await refresh(app, tokens.refresh_token!);
    expect(await introspect(app, tokens.refresh_token!)).toEqual({ active: false }); // used
    expect(await introspect(app, next.refresh_token!)).toMatchObject({ active: true });
    await updateClient(keyfob().store, app.clientId, { refreshTokensAllowed: false });
    expect(await introspect(app, next.refresh_token!)).toEqual({ active: false }); // unusable now
    await updateClient(keyfob().store, app.clientId, { refreshTokensAllowed: true });
    await revoke(app, next.refresh_token!);
    expect(await introspect(other, next.refresh_token!)).toEqual({ active: false });
    expect(await introspect(app, randomBytes(32).toString("base64url"))).toEqual({ active: false });
  });
});

describe("Flow A", () => {
  it("keeps its response exactly with offline_access: dropped, no refresh token, even for a license allowed refresh tokens", async () => {
    const license = await registerLicense();
    await updateClient(keyfob().store, license.clientId, { refreshTokensAllowed: true });
    const { state, challenge } = await requestChallenge(license, { scope: OFFLINE });
    const response = await submit(license, state, await license.owner.signMessage({ message: challenge }));
    expect(response.status).toBe(200);
    const body = await response.json();
    expect(Object.keys(body)).toEqual(["access_token", "token_type", "expires_in", "id_token"]);
    expect(decodeJwt(body.access_token).scope).toBe("openid email");
    expect(await tables(keyfob()).refreshToken.count({ where: { clientId: license.clientId } })).toBe(0);
  });

  it("accepts offline_access as a supported scope", () => {
    expect(parseScope("openid offline_access")).toEqual(["openid", "offline_access"]);
  });
});

describe("dashboard", () => {
  const bootstrap = privateKeyToAccount(generatePrivateKey()).address;
  let k: Keyfob;
  let session: string;

  beforeAll(async () => {
    k = createKeyfob(loadConfig({ ...process.env, ADMIN_ADDRESSES: bootstrap }), keyfob().store);
    const { location, cookie } = await beginAdminLogin(k);
    const start = await startAuthorization(k, new URL(location).searchParams);
    if (start.kind !== "login") throw new Error("expected the admin login page");
    const callback = await completeAuthorization(k, start.interactionId, {
      identity: { provider: "web3", subject: bootstrap, emailVerified: false },
    });
    session = (await finishAdminLogin(k, cookie, new URL(callback.location).searchParams))!;
  });

  it("lists live refresh grants per client and account, and revokes one or all through the audited admin actions", async () => {
    const app = await registerApp();
    const admin = { accountId: bootstrap, label: bootstrap, scopes: ALL_SCOPES };
    const alice = google();
    const a = await exchange(app, await code(app, OFFLINE, alice));
    const a2 = await refresh(app, a.refresh_token!);
    const b = await exchange(app, await code(app));
    await exchange(app, await code(app, "openid email")); // no grant

    const listed = await listRefreshGrants(k, admin, { clientId: app.clientId });
    expect(listed.total).toBe(2);
    const [familyA, familyB] = [(await row(a.refresh_token!)).familyId, (await row(b.refresh_token!)).familyId];
    const grantA = listed.items.find((g) => g.familyId === familyA)!;
    expect(grantA).toMatchObject({
      clientId: app.clientId,
      scope: OFFLINE,
      connector: "google",
      rotations: 1,
      lastUsedAt: expect.any(Date),
    });
    expect(grantA.grantedAt.getTime()).toBeLessThan(grantA.lastUsedAt!.getTime() + 1);
    expect(listed.items.find((g) => g.familyId === familyB)).toMatchObject({ rotations: 0, lastUsedAt: null });
    const byAccount = await listRefreshGrants(k, admin, { accountId: grantA.accountId });
    expect(byAccount.items.map((g) => g.familyId)).toEqual([familyA]);

    // Refused to a signed-out caller, and for bad input, before anything changes.
    expect(await performAdminChange(k, undefined, "refresh_token.revoke", { familyId: familyA })).toMatchObject({ ok: false, status: 401 });
    expect(await performAdminChange(k, session, "refresh_token.revoke", {})).toMatchObject({
      ok: false,
      fieldErrors: { target: expect.any(String) },
    });
    expect(await performAdminChange(k, session, "refresh_token.revoke", { familyId: "no-such-family" })).toMatchObject({
      ok: false,
      fieldErrors: { familyId: expect.any(String) },
    });
    expect((await userinfo(a2.access_token)).status).toBe(200);

    expect(await performAdminChange(k, session, "refresh_token.revoke", { familyId: familyA })).toEqual({
      ok: true,
      value: { revoked: 1 },
    });
    await expectError(await refreshResponse(app, a2.refresh_token!), 400, "invalid_grant");
    for (const accessToken of [a.access_token, a2.access_token]) await expectError(await userinfo(accessToken), 401, "invalid_token");
    expect((await listRefreshGrants(k, admin, { clientId: app.clientId })).items.map((g) => g.familyId)).toEqual([familyB]);

    expect(await performAdminChange(k, session, "refresh_token.revoke", { clientId: app.clientId })).toEqual({
      ok: true,
      value: { revoked: 1 },
    });
    await expectError(await refreshResponse(app, b.refresh_token!), 400, "invalid_grant");
    await expectError(await userinfo(b.access_token), 401, "invalid_token");
    expect((await listRefreshGrants(k, admin, { clientId: app.clientId })).total).toBe(0);

    const events = await tables(k).auditEvent.findMany({
      where: { action: "refresh_token.revoked", clientId: app.clientId },
      orderBy: { id: "asc" },
    });
    expect(events.map((e) => [e.outcome, e.actor, e.detail])).toEqual([
      ["success", bootstrap, `${familyA}; live refresh grants: 1 -> 0; 2 access tokens revoked with them`],
      ["success", bootstrap, "live refresh grants: 1 -> 0; 1 access tokens revoked with them"],
    ]);
    expect(events[0].accountId).toBe(grantA.accountId);
  });
});

describe("housekeeping", () => {
  let storage: Store;
  let db: Database;
  beforeAll(async () => {
    storage = await isolatedDatabase("refresh_housekeeping_test");
    db = rawConnection(storage).db;
    await db.client.create({ data: { id: "c", name: "c" } });
  });
  afterAll(() => storage.close());

  it("prunes a refresh family a day after its last token expired, and keeps used tokens of a live family for reuse detection", async () => {
    const now = new Date("2030-06-01T00:00:00Z");
    const ago = (hours: number) => new Date(now.getTime() - hours * 3600_000);
    const token = (tokenHash: string, familyId: string, expiresAt: Date, usedAt: Date | null = null) =>
      db.refreshToken.create({
        data: {
          tokenHash,
          familyId,
          clientId: "c",
          accountId: "a",
          connector: "google",
          scope: "openid",
          authTime: ago(24 * 90),
          amr: "google",
          expiresAt,
          familyExpiresAt: ago(-24 * 200),
          usedAt,
        },
      });
    await token("dead-1", "dead", ago(24 * 40), ago(24 * 41));
    await token("dead-2", "dead", ago(25));
    await token("live-1", "live", ago(24 * 40), ago(24 * 41)); // used long ago; its successor lives
    await token("live-2", "live", ago(-24));
    await token("recent-1", "recent", ago(23));

    expect(await sweepExpired(storage, loadConfig(), now)).toBe(2);
    expect((await db.refreshToken.findMany({ orderBy: { tokenHash: "asc" } })).map((t) => t.tokenHash)).toEqual([
      "live-1",
      "live-2",
      "recent-1",
    ]);
  });
});
