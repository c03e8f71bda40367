/**
 * Flow B on the real route handlers and a real PostgreSQL: authorization requests, codes, the
 * exchange at /token (PKCE, client authentication, reuse), userinfo, revocation and introspection.
 * The upstream logins (Google, Apple, wallet UI) run in real Chromium in e2e/; here an identity is
 * handed to completeAuthorization directly, and wallet logins are signed with real viem keys.
 */
import { jwtVerify, createLocalJWKSet, type JSONWebKeySet } from "jose";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { createSiweMessage } from "viem/siwe";
import { beforeAll, describe, expect, it } from "vitest";
import { linkWallet, resolveAccount } from "@/lib/accounts/accounts";
import { startAuthorization } from "@/lib/actions/authorize";
import { completeAuthorization, endedInteraction, leaveInteraction } from "@/lib/interactions/interactions";
import { loginWithWallet } from "@/lib/siwe/login";
import { endSecretOverlap, RegistryError, rotateClientSecret, setClientEnabled, updateClient } from "@/lib/clients/registry";
import { opaqueDigest } from "@/lib/oauth/opaque";
import { DPOP_SIGNING_ALGS } from "@/lib/oauth/dpop";
import { openidConfiguration } from "@/lib/discovery";
import { keyfob } from "@/lib/runtime";
import { loadConfig } from "@/lib/config";
import { createKeyfob } from "@/lib/keyfob";
import { startSession } from "@/lib/sessions/login-session";
import { createChallengeMessage } from "@/lib/siwe/challenge";
import { SIWE_PURPOSE } from "@/lib/siwe/purpose";
import { decodeSubject } from "@/lib/tokens/sub";
import { expectError, ISSUER, registerLicense, requestChallenge, submit } from "./support/flow-a";
import {
  authorize,
  authorizeQuery,
  basic,
  FORM,
  google,
  pkce,
  registerApp,
  signedInNow,
  token,
  tokenRequest,
  userinfo,
  type App,
} from "./support/flow-b";
import { tables } from "./support/database";
import { route } from "./support/routes";

const introspectRoute = route("/token/introspect");
const keysRoute = route("/keys");
const revokeRoute = route("/token/revoke");
const tokenRoute = route("/token");
const userinfoGet = route("/userinfo");
const userinfoPost = route("/userinfo");

let jwks: ReturnType<typeof createLocalJWKSet>;

beforeAll(async () => {
  jwks = createLocalJWKSet((await (await keysRoute(new Request("http://localhost/keys"))).json()) as JSONWebKeySet);
});

describe("GET /auth (authorization request)", () => {
  it("refuses request objects with request_not_supported and request_uri_not_supported, at the redirect URI with the state", async () => {
    const app = await registerApp();
    for (const [name, value, error] of [
      ["request", "eyJhbGciOiJub25lIn0.eyJzdGF0ZSI6ImlubmVyIn0.", "request_not_supported"],
      ["request_uri", "https://app.example.com/request.jwt", "request_uri_not_supported"],
    ]) {
      const start = await startAuthorization(keyfob(), authorizeQuery(app, { [name]: value, state: "outer" }));
      if (start.kind !== "redirect") throw new Error(`expected a redirect, got ${start.kind}`);
      const params = new URL(start.location).searchParams;
      expect([params.get("error"), params.get("state"), params.get("iss")]).toEqual([error, "outer", ISSUER]);
    }
  });

  it("refuses a state or nonce over 512 bytes with invalid_request, stores nothing, and does not echo the state", async () => {
    const app = await registerApp();
    const before = await tables(keyfob()).interaction.count({ where: { clientId: app.clientId } });
    const oversized: Record<string, string>[] = [
      { state: "s".repeat(513) },
      { nonce: "n".repeat(513), state: "ok" },
      { login_hint: "h".repeat(513), state: "ok" },
    ];
    for (const extra of oversized) {
      const start = await startAuthorization(keyfob(), authorizeQuery(app, extra));
      if (start.kind !== "redirect") throw new Error(`expected a redirect, got ${start.kind}`);
      const params = new URL(start.location).searchParams;
      expect(params.get("error")).toBe("invalid_request");
      expect(params.get("state")).toBe(extra.state.length > 512 ? null : "ok");
    }
    expect(await tables(keyfob()).interaction.count({ where: { clientId: app.clientId } })).toBe(before);
  });

  it.each([
    ["no client_id", (app: App) => authorizeQuery(app, { client_id: "" }), "no_client_id"],
    ["an unknown client", (app: App) => authorizeQuery(app, { client_id: "kf_unknown" }), "unknown_client"],
    [
      "an unregistered redirect_uri",
      (app: App) => authorizeQuery(app, { redirect_uri: "https://evil.example.com/cb" }),
      "unregistered_redirect_uri",
    ],
    [
      "a redirect_uri differing by a slash",
      (app: App) => authorizeQuery(app, { redirect_uri: `${app.redirectUri}/` }),
      "unregistered_redirect_uri",
    ],
  ])("shows an error page, never a redirect, for %s", async (_, query, code) => {
    const app = await registerApp();
    const start = await startAuthorization(keyfob(), query(app));
    expect(start).toEqual({ kind: "error", reason: { code } });
  });

  it("shows an error page for a disabled client", async () => {
    const app = await registerApp();
    await setClientEnabled(keyfob().store, app.clientId, false);
    expect((await startAuthorization(keyfob(), authorizeQuery(app))).kind).toBe("error");
  });

  it.each([
    ["a bad scope", { scope: "email" }, "invalid_scope"],
    ["an unknown scope", { scope: "openid admin" }, "invalid_scope"],
    ["response_type=token", { response_type: "token" }, "unsupported_response_type"],
    ["a plain PKCE method", { code_challenge: "a".repeat(43), code_challenge_method: "plain" }, "invalid_request"],
    ["a PKCE challenge without method", { code_challenge: "a".repeat(43) }, "invalid_request"],
    ["an unknown prompt", { prompt: "bogus" }, "invalid_request"],
    // Not silently answered in the query instead (discovery's response_modes_supported says query).
    ["response_mode=form_post", { response_mode: "form_post" }, "invalid_request"],
    ["response_mode=fragment", { response_mode: "fragment" }, "invalid_request"],
    ["an unknown response_mode", { response_mode: "jwt" }, "invalid_request"],
  ])("redirects %s back with error, state and iss", async (_, extra, error) => {
    const app = await registerApp();
    const start = await startAuthorization(keyfob(), authorizeQuery(app, { state: "xyz", ...extra }));
    if (start.kind !== "redirect") throw new Error("expected a redirect");
    const url = new URL(start.location);
    expect(`${url.origin}${url.pathname}`).toBe(app.redirectUri.split("?")[0]);
    expect(url.searchParams.get("tenant")).toBe("7"); // the redirect URI's own query is kept
    expect(url.searchParams.get("error")).toBe(error);
    expect(url.searchParams.get("error_description")).toBeTruthy();
    expect(url.searchParams.get("state")).toBe("xyz");
    expect(url.searchParams.get("iss")).toBe(ISSUER);
  });

  it("takes response_mode=query, the mode discovery lists", async () => {
    const app = await registerApp();
    expect(openidConfiguration(keyfob().config).response_modes_supported).toEqual(["query"]);
    expect((await startAuthorization(keyfob(), authorizeQuery(app, { response_mode: "query" }))).kind).toBe("login");
  });

  it("answers prompt=none with login_required without a session, and with a code with one", async () => {
    const app = await registerApp();
    const without = await startAuthorization(keyfob(), authorizeQuery(app, { prompt: "none" }));
    expect(without.kind === "redirect" && new URL(without.location).searchParams.get("error")).toBe("login_required");
    const { session } = await startSession(keyfob(), { accountId: await resolveAccount(keyfob(), google()), identity: google() });
    const withSession = await startAuthorization(keyfob(), authorizeQuery(app, { prompt: "none" }), { session });
    expect(withSession.kind === "redirect" && new URL(withSession.location).searchParams.get("code")).toBeTruthy();
  });

  it("redirects after login with code, state (even empty) and iss; the interaction is single use", async () => {
    const app = await registerApp();
    const start = await startAuthorization(keyfob(), authorizeQuery(app, { state: "" }));
    if (start.kind !== "login") throw new Error("expected login");
    expect(start.clientName).toBe("Fleet dashboard");
    const location = new URL((await completeAuthorization(keyfob(), start.interactionId, { identity: google() })).location);
    expect(location.searchParams.get("code")).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(location.searchParams.has("state")).toBe(true);
    expect(location.searchParams.get("state")).toBe("");
    expect(location.searchParams.get("iss")).toBe(ISSUER);
    expect(location.searchParams.get("tenant")).toBe("7");
    await expect(completeAuthorization(keyfob(), start.interactionId, { identity: google() })).rejects.toMatchObject({
      code: "invalid_request",
    });
  });
});

describe("POST /token (code exchange)", () => {
  it("exchanges a code for tokens with the account's claims (Google identity, email scope)", async () => {
    const app = await registerApp();
    const identity = google();
    const code = (await authorize(app, identity)).searchParams.get("code")!;
    const response = await token(app, { code });
    expect(response.status).toBe(200);
    expect(response.headers.get("cache-control")).toBe("no-store");
    const body = await response.json();
    expect(Object.keys(body)).toEqual(["access_token", "token_type", "expires_in", "id_token"]);
    const { payload } = await jwtVerify(body.id_token, jwks, { issuer: ISSUER, audience: app.clientId });
    const { userId, connector } = decodeSubject(payload.sub!);
    expect(connector).toBe("google");
    expect(userId).toMatch(/^0x[0-9a-fA-F]{40}$/);
    expect(payload).toMatchObject({
      provider_id: "google",
      ethereum_address: userId,
      email: identity.email,
      email_verified: true,
      nonce: "n-1",
    });
    const account = await tables(keyfob()).account.findUniqueOrThrow({ where: { id: userId } });
    expect(Object.keys(account).sort()).toEqual(["blockedAt", "createdAt", "id"]); // an address only: no key is generated or kept for it
    // The same identity logs into the same account.
    const again = await token(app, { code: (await authorize(app, identity)).searchParams.get("code")! });
    const { payload: second } = await jwtVerify((await again.json()).access_token, jwks);
    expect(second.sub).toBe(payload.sub);
  });

  it("checks PKCE (S256): right verifier, missing, wrong, and a verifier without challenge", async () => {
    const app = await registerApp();
    const { verifier, challenge } = pkce();
    const withPkce = () =>
      authorize(app, google(), { code_challenge: challenge, code_challenge_method: "S256" }).then((u) => u.searchParams.get("code")!);
    await expectError(await token(app, { code: await withPkce(), code_verifier: "" }), 400, "invalid_grant");
    await expectError(await token(app, { code: await withPkce(), code_verifier: pkce().verifier }), 400, "invalid_grant");
    expect((await token(app, { code: await withPkce(), code_verifier: verifier })).status).toBe(200);
    const confidential = await registerApp({ confidential: true });
    const plain = (await authorize(confidential)).searchParams.get("code")!;
    await expectError(await token(confidential, { code: plain, code_verifier: verifier }), 400, "invalid_grant");
    await expectError(await token(confidential, { code: plain, code_verifier: "short" }), 400, "invalid_grant");
    // A refused verifier does not use the code up.
    expect((await token(confidential, { code: plain })).status).toBe(200);
  });

  it("refuses credentials in the URL of /token, revocation and introspection (RFC 6749 2.3.1)", async () => {
    const app = await registerApp({ confidential: true });
    const code = (await authorize(app)).searchParams.get("code")!;
    const inUrl = (route: (r: Request) => Promise<Response>, path: string, query: Record<string, string>, body: Record<string, string>) =>
      route(
        new Request(`${ISSUER}${path}?${new URLSearchParams(query)}`, { method: "POST", headers: FORM, body: new URLSearchParams(body) }),
      );
    for (const [route, path, query, body] of [
      [
        tokenRoute,
        "/token",
        { code },
        { grant_type: "authorization_code", redirect_uri: app.redirectUri, client_id: app.clientId, client_secret: app.secret! },
      ],
      [
        tokenRoute,
        "/token",
        { client_secret: app.secret! },
        { grant_type: "authorization_code", code, redirect_uri: app.redirectUri, client_id: app.clientId },
      ],
      [
        tokenRoute,
        "/token",
        { code_verifier: app.pkce.verifier },
        { grant_type: "authorization_code", code, redirect_uri: app.redirectUri, client_id: app.clientId, client_secret: app.secret! },
      ],
      [revokeRoute, "/token/revoke", { token: "x" }, { client_id: app.clientId, client_secret: app.secret! }],
      [introspectRoute, "/token/introspect", { token: "x" }, { client_id: app.clientId, client_secret: app.secret! }],
    ] as const) {
      const refused = await expectError(await inUrl(route, path, query, body), 400, "invalid_request");
      expect(refused.error_description).toMatch(/must be sent in the request body, not in the URL$/);
    }
    // Nothing was redeemed: the same code still works from the body.
    expect((await token(app, { code })).status).toBe(200);
  });

  it("requires PKCE of public clients (RFC 9700), and of confidential ones when an admin says so", async () => {
    const publicApp = await registerApp();
    const refused = await startAuthorization(keyfob(), authorizeQuery(publicApp, { code_challenge: "", state: "no-pkce" }));
    if (refused.kind !== "redirect") throw new Error("expected a redirect");
    const params = new URL(refused.location).searchParams;
    expect([params.get("error"), params.get("state")]).toEqual(["invalid_request", "no-pkce"]);
    expect(params.get("error_description")).toMatch(/code_challenge is required/);

    const confidential = await registerApp({ confidential: true });
    expect((await startAuthorization(keyfob(), authorizeQuery(confidential))).kind).toBe("login");
    await updateClient(keyfob().store, confidential.clientId, { requirePkce: true });
    const now = await startAuthorization(keyfob(), authorizeQuery(confidential));
    expect(now.kind === "redirect" && new URL(now.location).searchParams.get("error")).toBe("invalid_request");
    const withPkce = await authorize(confidential, google(), {
      code_challenge: confidential.pkce.challenge,
      code_challenge_method: "S256",
    });
    expect(
      (await token(confidential, { code: withPkce.searchParams.get("code")!, code_verifier: confidential.pkce.verifier })).status,
    ).toBe(200);
  });

  it("never redeems a public client's code that was issued without PKCE", async () => {
    const app = await registerApp({ confidential: true });
    const code = (await authorize(app)).searchParams.get("code")!;
    // The client turned public (its secret removed) after the code was issued.
    await tables(keyfob()).client.update({ where: { id: app.clientId }, data: { secretHash: null } });
    await expectError(await token({ ...app, secret: undefined }, { code, code_verifier: "" }), 400, "invalid_grant");
  });

  it.each([
    ["grant_type other", { grant_type: "password" }, 400, "unsupported_grant_type"],
    ["code missing", { code: "" }, 400, "invalid_request"],
    ["redirect_uri missing", { redirect_uri: "" }, 400, "invalid_request"],
    ["redirect_uri different", { redirect_uri: "https://fleet.example.com/other" }, 400, "invalid_grant"],
    ["unknown code", { code: "bm9wZQ" }, 400, "invalid_grant"],
  ])("refuses %s", async (_, params, status, error) => {
    const app = await registerApp();
    const code = (await authorize(app)).searchParams.get("code")!;
    await expectError(await token(app, { code, ...params }), status, error);
  });

  it("refuses an expired code, and a code of another client", async () => {
    const app = await registerApp();
    const other = await registerApp({ redirectUri: app.redirectUri });
    const code = (await authorize(app)).searchParams.get("code")!;
    await expectError(await token(other, { code }), 400, "invalid_grant");
    await tables(keyfob()).authorizationCode.update({
      where: { codeHash: opaqueDigest(code) },
      data: { expiresAt: new Date(Date.now() - 1) },
    });
    await expectError(await token(app, { code }), 400, "invalid_grant");
  });

  it("issues codes that live AUTHORIZATION_CODE_TTL (60 s by default)", async () => {
    const app = await registerApp();
    const code = (await authorize(app)).searchParams.get("code")!;
    const row = await tables(keyfob()).authorizationCode.findUniqueOrThrow({ where: { codeHash: opaqueDigest(code) } });
    expect(row.expiresAt.getTime() - Date.now()).toBeGreaterThan(55_000);
    expect(row.expiresAt.getTime() - Date.now()).toBeLessThanOrEqual(60_000);
  });

  it("authenticates confidential clients with client_secret_basic or client_secret_post", async () => {
    const app = await registerApp({ confidential: true });
    expect((await token(app, { code: (await authorize(app)).searchParams.get("code")! }, "basic")).status).toBe(200);
    expect((await token(app, { code: (await authorize(app)).searchParams.get("code")! }, "post")).status).toBe(200);
    const code = (await authorize(app)).searchParams.get("code")!;
    const unauthenticated = await token(app, { code }, "none");
    await expectError(unauthenticated, 401, "invalid_client");
    const wrongBasic = await token({ ...app, secret: "wrong" }, { code }, "basic");
    const wrongPost = await token({ ...app, secret: "wrong" }, { code }, "post");
    await expectError(wrongBasic, 401, "invalid_client");
    await expectError(wrongPost, 401, "invalid_client");
    // Challenged with the scheme the client used, Basic; a client that posted its secret, or none, is not challenged (RFC 6749 5.2).
    expect(wrongBasic.headers.get("www-authenticate")).toBe(`Basic realm="keyfob"`);
    expect(wrongPost.headers.get("www-authenticate")).toBeNull();
    expect(unauthenticated.headers.get("www-authenticate")).toBeNull();
    expect((await token(app, { code }, "basic")).status).toBe(200); // failed attempts did not consume it
    const secretRow = await tables(keyfob()).client.findUniqueOrThrow({ where: { id: app.clientId } });
    expect(secretRow.secretHash).not.toContain(app.secret);
  });

  it("says, and audits, what failed in a client's authentication: the secret missing or wrong, the method, the grant", async () => {
    const app = await registerApp({ confidential: true, settings: { refreshTokensAllowed: true } });
    const publicApp = await registerApp();
    const code = (await authorize(app)).searchParams.get("code")!;
    const failures: [Response, string][] = [
      [
        await token(app, { code }, "none"),
        "client authentication failed: the client has a secret, and none was sent (use client_secret_basic or client_secret_post) (none, grant_type authorization_code)",
      ],
      [
        await token({ ...app, secret: "wrong" }, { code }, "basic"),
        "client authentication failed: wrong client_secret (client_secret_basic, grant_type authorization_code)",
      ],
      [
        await token({ ...app, secret: "wrong" }, { grant_type: "refresh_token", refresh_token: "x".repeat(43) }, "post"),
        "client authentication failed: wrong client_secret (client_secret_post, grant_type refresh_token)",
      ],
      [
        await token({ ...app, secret: "wrong" }, { grant_type: "client_credentials" }, "post"),
        "client authentication failed: wrong client_secret (client_secret_post, grant_type client_credentials)",
      ],
      [
        await token({ ...publicApp, secret: "invented" }, { code: "x".repeat(43) }, "post"),
        "client authentication failed: a client_secret was sent, but the client is public and has none (client_secret_post, grant_type authorization_code)",
      ],
    ];
    for (const [response, description] of failures) {
      expect(response.status).toBe(401);
      expect(await response.json()).toMatchObject({ error: "invalid_client", error_description: description });
    }
    await keyfob().audit.flush();
    const audited = await tables(keyfob()).auditEvent.findMany({
      where: { action: "token.failed", clientId: { in: [app.clientId, publicApp.clientId] } },
      orderBy: { id: "asc" },
    });
    expect(audited.map((e) => [e.outcome, e.detail])).toEqual(
      failures.map(([, description]) => ["invalid_client", `token: ${description}`]),
    );
    expect(audited.map((e) => e.detail).join()).not.toContain(app.secret);
  });

  it("keeps the replaced secret valid during a rotation's overlap: both work, the old one not after it, nor once ended early", async () => {
    // An instance whose clock the test moves past the overlap's end, instead of waiting for it.
    let elapsed = 0;
    const k = createKeyfob({ ...loadConfig(), recoveryThreads: 0 }, keyfob().store, {
      clock: { now: () => new Date(Date.now() + elapsed) },
    });
    const app = await registerApp({ confidential: true });
    // Introspection authenticates from the database, /token from the instance's client cache: both are checked.
    const introspects = async (secret: string) =>
      (
        await route(
          "/token/introspect",
          () => k,
        )(
          new Request(`${ISSUER}/token/introspect`, {
            method: "POST",
            headers: { ...FORM, authorization: basic({ ...app, secret }) },
            body: new URLSearchParams({ token: "x".repeat(43) }),
          }),
        )
      ).status;
    const tokenOn = (secret: string, params: Record<string, string>) => route("/token", () => k)(tokenRequest({ ...app, secret }, params));
    const exchanges = async (secret: string) =>
      (await tokenOn(secret, { code: (await authorize(app, google(), {}, k)).searchParams.get("code")! })).status;
    const first = app.secret!;

    const second = await rotateClientSecret(k, app.clientId, { overlapSeconds: 2 });
    expect([await introspects(first), await introspects(second), await exchanges(first), await exchanges(second)]).toEqual([
      200, 200, 200, 200,
    ]);
    elapsed += 2_100;
    expect([await introspects(first), await introspects(second), await exchanges(first), await exchanges(second)]).toEqual([
      401, 200, 401, 200,
    ]);
    // After the overlap the replaced secret is refused as any wrong one: nothing says it was ever right.
    const wrong = (await (await tokenOn("y".repeat(43), { code: "x".repeat(43) })).json()).error_description;
    const refused = await tokenOn(first, { code: "x".repeat(43) });
    expect((await refused.json()).error_description).toBe(wrong);
    expect(wrong).toMatch(/^client authentication failed: wrong client_secret/);

    // Ended early: the replaced secret stops at once; there is nothing left to end after that.
    const third = await rotateClientSecret(k, app.clientId, { overlapSeconds: 3600 });
    expect([await introspects(second), await introspects(third), await exchanges(second)]).toEqual([200, 200, 200]);
    await endSecretOverlap(k, app.clientId);
    expect([await introspects(second), await introspects(third), await exchanges(second), await exchanges(third)]).toEqual([
      401, 200, 401, 200,
    ]);
    expect((await (await tokenOn(second, { code: "x".repeat(43) })).json()).error_description).toBe(wrong);
    await expect(endSecretOverlap(k, app.clientId)).rejects.toThrow(/no previous secret that is still valid/);

    // Without an overlap the replaced secret stops at once; a public client has nothing to keep valid.
    const fourth = await rotateClientSecret(k, app.clientId);
    expect([await introspects(third), await introspects(fourth)]).toEqual([401, 200]);
    await expect(rotateClientSecret(k, app.clientId, { overlapSeconds: -1 })).rejects.toBeInstanceOf(RegistryError);
    await expect(rotateClientSecret(k, (await registerApp()).clientId, { overlapSeconds: 60 })).rejects.toThrow(/no secret yet/);
    await k.close();
  });

  it("refuses malformed client authentication and request bodies", async () => {
    const app = await registerApp({ confidential: true });
    const code = (await authorize(app)).searchParams.get("code")!;
    const post = (headers: Record<string, string>, body: string) =>
      tokenRoute(new Request(`${ISSUER}/token`, { method: "POST", headers, body }));
    const form = new URLSearchParams({
      grant_type: "authorization_code",
      code,
      redirect_uri: app.redirectUri,
      client_secret: app.secret!,
    }).toString();
    const basic = `Basic ${Buffer.from(`${app.clientId}:${app.secret}`).toString("base64")}`;
    await expectError(await post({ ...FORM, authorization: basic }, form), 400, "invalid_request"); // two methods at once
    await expectError(
      await post({ ...FORM, authorization: `Basic ${Buffer.from("no-colon").toString("base64")}` }, form),
      401,
      "invalid_client",
    );
    await expectError(
      await post({ "content-type": "application/json" }, JSON.stringify({ grant_type: "authorization_code", code })),
      415,
      "invalid_request",
    );
    const wrongId = new URLSearchParams({
      grant_type: "authorization_code",
      code,
      redirect_uri: app.redirectUri,
      client_id: "kf_other",
    }).toString();
    await expectError(await post({ ...FORM, authorization: basic }, wrongId), 400, "invalid_request");
    expect((await token(app, { code })).status).toBe(200); // none of the refusals consumed the code
  });

  it("refuses a redeemed code and revokes the tokens issued from it", async () => {
    const app = await registerApp();
    const code = (await authorize(app)).searchParams.get("code")!;
    const first = await (await token(app, { code })).json();
    expect((await userinfo(first.access_token)).status).toBe(200);
    const body = await expectError(await token(app, { code }), 400, "invalid_grant");
    expect(body.error_description).toMatch(/already been used/);
    await expectError(await userinfo(first.access_token), 401, "invalid_token");
  });

  it("revokes nothing for a used code presented with a made-up verifier or another redirect URI", async () => {
    // Security review, third round, item 7: whoever saw a used code (a log, a referrer) cannot
    // revoke the rightful client's tokens without what would have redeemed it.
    const app = await registerApp();
    const code = (await authorize(app)).searchParams.get("code")!;
    const first = await (await token(app, { code })).json();
    const madeUp = await expectError(await token(app, { code, code_verifier: "x".repeat(43) }), 400, "invalid_grant");
    expect(madeUp.error_description).toMatch(/code_verifier does not match/);
    const elsewhere = await expectError(await token(app, { code, redirect_uri: "https://attacker.example.com/cb" }), 400, "invalid_grant");
    expect(elsewhere.error_description).toMatch(/redirect_uri differs/);
    expect((await userinfo(first.access_token)).status).toBe(200);
  });

  it("lets exactly one of 50 concurrent redemptions of a code succeed", async () => {
    const app = await registerApp();
    const code = (await authorize(app)).searchParams.get("code")!;
    const responses = await Promise.all(Array.from({ length: 50 }, () => token(app, { code })));
    expect(responses.filter((r) => r.status === 200)).toHaveLength(1);
    for (const r of responses.filter((r) => r.status !== 200)) expect((await r.json()).error).toBe("invalid_grant");
  });
});

describe("wallet login on the hosted page", () => {
  async function walletLogin(
    app: App,
    wallet = privateKeyToAccount(generatePrivateKey()),
    tamper: Partial<Parameters<typeof createSiweMessage>[0]> = {},
  ) {
    const start = await startAuthorization(keyfob(), authorizeQuery(app));
    if (start.kind !== "login") throw new Error("expected login");
    const message = createSiweMessage({
      domain: "localhost:3000",
      address: wallet.address,
      statement: `Sign in to ${start.clientName}`,
      uri: ISSUER,
      version: "1",
      chainId: 1,
      nonce: start.walletNonce,
      issuedAt: new Date(),
      resources: [SIWE_PURPOSE.login],
      ...tamper,
    });
    const signature = await wallet.signMessage({ message });
    return {
      start,
      message,
      signature,
      login: async () => (await loginWithWallet(keyfob(), start.interactionId, message, signature)).location,
    };
  }

  it("logs a wallet into the account of its own address", async () => {
    const app = await registerApp();
    const wallet = privateKeyToAccount(generatePrivateKey());
    const { login } = await walletLogin(app, wallet);
    const code = new URL(await login()).searchParams.get("code")!;
    const { payload } = await jwtVerify((await (await token(app, { code })).json()).id_token, jwks);
    expect(decodeSubject(payload.sub!)).toEqual({ userId: wallet.address, connector: "web3" });
    expect(payload).toMatchObject({ provider_id: "web3", ethereum_address: wallet.address, email_verified: false });
    expect(payload.email).toBeUndefined();
  });

  it.each([
    ["another nonce", { nonce: "abcdefgh12345678" }],
    ["another domain", { domain: "evil.example.com" }],
    ["another URI", { uri: "https://evil.example.com" }],
    ["another chain", { chainId: 137 }],
    ["an old message", { issuedAt: new Date(Date.now() - 3600_000) }],
    ["no purpose (a Flow A challenge has no Resources line)", { resources: undefined }],
    ["the link-wallet purpose", { resources: [SIWE_PURPOSE.linkWallet] }],
    ["a second resource", { resources: [SIWE_PURPOSE.login, "https://example.com/more"] }],
  ])("refuses a message with %s", async (_, tamper) => {
    const app = await registerApp();
    const { login } = await walletLogin(app, undefined, tamper);
    await expect(login()).rejects.toMatchObject({ code: "invalid_grant" });
  });

  it("refuses a message whose Issued At is not a time", async () => {
    const app = await registerApp();
    const wallet = privateKeyToAccount(generatePrivateKey());
    const { start, message } = await walletLogin(app, wallet);
    const whenever = message.replace(/Issued At: .*/, "Issued At: whenever");
    await expect(
      loginWithWallet(keyfob(), start.interactionId, whenever, await wallet.signMessage({ message: whenever })),
    ).rejects.toMatchObject({
      code: "invalid_grant",
      message: "the sign-in message has no valid Issued At time",
    });
  });

  it("refuses a signed Flow A challenge carrying the interaction's nonce (a relayed signature)", async () => {
    const app = await registerApp();
    const wallet = privateKeyToAccount(generatePrivateKey());
    const { start } = await walletLogin(app, wallet);
    const challenge = createChallengeMessage({
      issuerUrl: ISSUER,
      domain: app.redirectUri,
      address: wallet.address,
      chainId: 1,
      nonce: start.walletNonce,
      issuedAt: new Date(),
    });
    await expect(
      loginWithWallet(keyfob(), start.interactionId, challenge, await wallet.signMessage({ message: challenge })),
    ).rejects.toMatchObject({ code: "invalid_grant" });
  });

  it("ends the interaction on Cancel: no login after it, and no Cancel after a login", async () => {
    const app = await registerApp();
    const cancelled = await walletLogin(app);
    const back = new URL(await leaveInteraction(keyfob(), cancelled.start.interactionId));
    expect([back.searchParams.get("error"), back.searchParams.get("error_description")]).toEqual([
      "access_denied",
      "the user cancelled the login",
    ]);
    await expect(cancelled.login()).rejects.toMatchObject({ code: "invalid_request" });
    // Back on the login page: it says the user cancelled, and may return to the application again.
    expect(await endedInteraction(keyfob(), cancelled.start.interactionId)).toMatchObject({ end: "cancelled", mayReturn: true });
    expect(new URL(await leaveInteraction(keyfob(), cancelled.start.interactionId)).searchParams.get("error")).toBe("access_denied");

    const loggedIn = await walletLogin(app);
    expect(await endedInteraction(keyfob(), loggedIn.start.interactionId)).toBeUndefined();
    await loggedIn.login();
    expect(await endedInteraction(keyfob(), loggedIn.start.interactionId)).toMatchObject({ end: "signed_in", mayReturn: false });
    await expect(leaveInteraction(keyfob(), loggedIn.start.interactionId)).rejects.toMatchObject({ code: "invalid_request" });
    await expect(leaveInteraction(keyfob(), "unknown-interaction-id-0000000000000000")).rejects.toMatchObject({
      code: "invalid_request",
    });
  });

  it("an expired interaction says so, starts again from the same request, and returns to the application", async () => {
    const app = await registerApp();
    const { start, login } = await walletLogin(app);
    await tables(keyfob()).interaction.update({ where: { id: start.interactionId }, data: { expiresAt: new Date(Date.now() - 1) } });
    const ended = await endedInteraction(keyfob(), start.interactionId);
    expect(ended).toMatchObject({ end: "expired", mayReturn: true });
    expect(new URLSearchParams(ended!.restartUrl.replace(/^\/auth\?/, "")).get("client_id")).toBe(app.clientId);
    const back = new URL(await leaveInteraction(keyfob(), start.interactionId));
    expect([back.searchParams.get("error"), back.searchParams.get("error_description")]).toEqual(["access_denied", "the login expired"]);
    await expect(login()).rejects.toMatchObject({ code: "invalid_request" });
  });

  it("refuses a signature by another key, and a replay after login", async () => {
    const app = await registerApp();
    const { start, message, login } = await walletLogin(app);
    const forged = await privateKeyToAccount(generatePrivateKey()).signMessage({ message });
    await expect(loginWithWallet(keyfob(), start.interactionId, message, forged)).rejects.toMatchObject({ code: "invalid_grant" });
    await login();
    await expect(login()).rejects.toMatchObject({ code: "invalid_request" });
  });

  it("logs a wallet linked to a Google account into that account", async () => {
    const app = await registerApp();
    const identity = google();
    const code = (await authorize(app, identity)).searchParams.get("code")!;
    const { payload } = await jwtVerify((await (await token(app, { code })).json()).id_token, jwks);
    const accountId = decodeSubject(payload.sub!).userId;
    const wallet = privateKeyToAccount(generatePrivateKey());
    await linkWallet(keyfob(), accountId, wallet.address);
    const { login } = await walletLogin(app, wallet);
    const walletCode = new URL(await login()).searchParams.get("code")!;
    const { payload: walletClaims } = await jwtVerify((await (await token(app, { code: walletCode })).json()).id_token, jwks);
    expect(decodeSubject(walletClaims.sub!)).toEqual({ userId: accountId, connector: "web3" });
    // A wallet that is already an account, or linked elsewhere, cannot be linked again.
    await expect(linkWallet(keyfob(), "0x0000000000000000000000000000000000000001", wallet.address)).rejects.toMatchObject({
      code: "invalid_request",
    });
  });
});

describe("userinfo, revocation, introspection", () => {
  async function tokens(app: App, identity = google()) {
    const code = (await authorize(app, identity)).searchParams.get("code")!;
    return (await token(app, { code })).json() as Promise<{ access_token: string; id_token: string }>;
  }
  const revoke = (app: App, tokenValue: string) =>
    revokeRoute(
      new Request(`${ISSUER}/token/revoke`, {
        method: "POST",
        headers: FORM,
        body: new URLSearchParams({ client_id: app.clientId, token: tokenValue }),
      }),
    );
  const introspect = (app: App, tokenValue: string) =>
    introspectRoute(
      new Request(`${ISSUER}/token/introspect`, {
        method: "POST",
        headers: { ...FORM, authorization: `Basic ${Buffer.from(`${app.clientId}:${app.secret ?? ""}`).toString("base64")}` },
        body: new URLSearchParams({ token: tokenValue }),
      }),
    );

  it("answers /userinfo by GET and POST with the token's claims", async () => {
    const app = await registerApp();
    const identity = google();
    const { access_token } = await tokens(app, identity);
    const get = await userinfo(access_token);
    expect(get.status).toBe(200);
    const claims = await get.json();
    expect(claims).toMatchObject({ provider_id: "google", email: identity.email, email_verified: true });
    expect(decodeSubject(claims.sub).connector).toBe("google");
    const post = await userinfoPost(
      new Request(`${ISSUER}/userinfo`, { method: "POST", headers: { authorization: `Bearer ${access_token}` } }),
    );
    expect(await post.json()).toEqual(claims);
    // RFC 6750 2.2: the token in a form body; never in the URL, never two ways at once.
    const inBody = await userinfoPost(
      new Request(`${ISSUER}/userinfo`, { method: "POST", headers: FORM, body: new URLSearchParams({ access_token }) }),
    );
    expect(await inBody.json()).toEqual(claims);
    await expectError(await userinfoGet(new Request(`${ISSUER}/userinfo?access_token=${access_token}`)), 400, "invalid_request");
    await expectError(
      await userinfoPost(
        new Request(`${ISSUER}/userinfo`, {
          method: "POST",
          headers: { ...FORM, authorization: `Bearer ${access_token}` },
          body: new URLSearchParams({ access_token }),
        }),
      ),
      400,
      "invalid_request",
    );
  });

  it("refuses /userinfo without a token, with an ID token, a forged or an expired token: 401", async () => {
    const app = await registerApp();
    const { access_token, id_token } = await tokens(app);
    // No credentials at all: both schemes offered, no error code in the challenge (RFC 6750 3.1, RFC 9449 7.2).
    const none = await userinfoGet(new Request(`${ISSUER}/userinfo`));
    expect(none.headers.get("www-authenticate")).toBe(`Bearer realm="keyfob", DPoP realm="keyfob", algs="${DPOP_SIGNING_ALGS.join(" ")}"`);
    await expectError(none, 401, "invalid_token");
    const noneByPost = await userinfoPost(new Request(`${ISSUER}/userinfo`, { method: "POST", headers: FORM, body: "" }));
    expect(noneByPost.headers.get("www-authenticate")).toBe(none.headers.get("www-authenticate"));
    const idToken = await userinfo(id_token);
    expect(idToken.headers.get("www-authenticate")).toBe('Bearer error="invalid_token"');
    await expectError(idToken, 401, "invalid_token");
    await expectError(await userinfo(`${access_token.slice(0, -4)}AAAA`), 401, "invalid_token");
    const { jti } = JSON.parse(Buffer.from(access_token.split(".")[1], "base64url").toString());
    await tables(keyfob()).issuedToken.update({ where: { jti }, data: { expiresAt: new Date(Date.now() - 1) } });
    await expectError(await userinfo(access_token), 401, "invalid_token");
  });

  it("revokes a client's own token (RFC 7009), and quietly ignores other clients' and unknown tokens", async () => {
    const app = await registerApp();
    const other = await registerApp();
    const { access_token } = await tokens(app);
    const byOther = await revoke(other, access_token);
    expect(byOther.status).toBe(200);
    expect((await userinfo(access_token)).status).toBe(200);
    expect((await revoke(app, "not-a-token")).status).toBe(200);
    const own = await revoke(app, access_token);
    expect(own.status).toBe(200);
    expect(await own.json()).toEqual({});
    await expectError(await userinfo(access_token), 401, "invalid_token");
  });

  it("refuses revocation and introspection requests without a token or with bad client credentials", async () => {
    const app = await registerApp();
    const resourceServer = await registerApp({ confidential: true });
    const { access_token } = await tokens(app);
    await expectError(
      await revokeRoute(new Request(`${ISSUER}/token/revoke`, { method: "POST", headers: FORM, body: `client_id=${app.clientId}` })),
      400,
      "invalid_request",
    );
    await expectError(
      await revokeRoute(new Request(`${ISSUER}/token/revoke`, { method: "POST", headers: FORM, body: `token=${access_token}` })),
      401,
      "invalid_client",
    );
    await expectError(await introspect({ ...resourceServer, secret: "wrong" }, access_token), 401, "invalid_client");
    const noToken = new Request(`${ISSUER}/token/introspect`, {
      method: "POST",
      headers: { ...FORM, authorization: `Basic ${Buffer.from(`${resourceServer.clientId}:${resourceServer.secret}`).toString("base64")}` },
      body: "",
    });
    await expectError(await introspectRoute(noToken), 400, "invalid_request");
    expect((await userinfo(access_token)).status).toBe(200);
  });

  it("introspects any client's tokens for a resource server, and only its own for another confidential client (RFC 7662 4)", async () => {
    const app = await registerApp({ confidential: true });
    const other = await registerApp({ confidential: true });
    const { access_token } = await tokens(app);
    expect(await (await introspect(app, access_token)).json()).toMatchObject({ active: true, client_id: app.clientId });
    expect(await (await introspect(other, access_token)).json()).toEqual({ active: false });
    await updateClient(keyfob().store, other.clientId, { resourceServer: true });
    expect(await (await introspect(other, access_token)).json()).toMatchObject({ active: true, client_id: app.clientId });
  });

  it("introspects tokens for confidential clients (RFC 7662), Flow A and Flow B alike", async () => {
    const app = await registerApp();
    const resourceServer = await registerApp({ confidential: true });
    await updateClient(keyfob().store, resourceServer.clientId, { resourceServer: true });
    const { access_token } = await tokens(app);
    const active = await (await introspect(resourceServer, access_token)).json();
    expect(active).toMatchObject({
      active: true,
      token_type: "Bearer",
      client_id: app.clientId,
      aud: app.clientId,
      iss: ISSUER,
      provider_id: "google",
      scope: "openid email",
    });
    expect(await (await introspect(resourceServer, "garbage")).json()).toEqual({ active: false });
    await revoke(app, access_token);
    expect(await (await introspect(resourceServer, access_token)).json()).toEqual({ active: false });
    await expectError(await introspect(app, access_token), 401, "invalid_client"); // a public client may not introspect

    const license = await registerLicense();
    const { state, challenge } = await requestChallenge(license);
    const flowA = await (await submit(license, state, await license.owner.signMessage({ message: challenge }))).json();
    expect(await (await introspect(resourceServer, flowA.access_token)).json()).toMatchObject({
      active: true,
      client_id: license.clientId,
      provider_id: "web3",
    });
  });
});

describe("linking a wallet to a signed-in account", () => {
  it("links the wallet that signs a message carrying the account's link nonce", async () => {
    const { accountLinkNonce, verifyAccountLink } = await import("@/lib/siwe/login");
    const { resolveAccount } = await import("@/lib/accounts/accounts");
    const accountId = await resolveAccount(keyfob(), google());
    const wallet = privateKeyToAccount(generatePrivateKey());
    const message = (nonce: string, purpose: string = SIWE_PURPOSE.linkWallet) =>
      createSiweMessage({
        domain: "localhost:3000",
        address: wallet.address,
        uri: ISSUER,
        version: "1",
        chainId: 1,
        nonce,
        issuedAt: new Date(),
        resources: [purpose],
      });
    // A nonce issued for another account does not link.
    const foreign = message(accountLinkNonce(keyfob(), "0x0000000000000000000000000000000000000002"));
    await expect(
      verifyAccountLink(keyfob(), accountId, foreign, await wallet.signMessage({ message: foreign }), signedInNow()),
    ).rejects.toMatchObject({
      code: "invalid_grant",
    });
    // A login message (another purpose) with the right nonce does not link either.
    const login = message(accountLinkNonce(keyfob(), accountId), SIWE_PURPOSE.login);
    await expect(
      verifyAccountLink(keyfob(), accountId, login, await wallet.signMessage({ message: login }), signedInNow()),
    ).rejects.toMatchObject({
      code: "invalid_grant",
    });
    const own = message(accountLinkNonce(keyfob(), accountId));
    await expect(verifyAccountLink(keyfob(), accountId, own, await wallet.signMessage({ message: own }), signedInNow())).resolves.toBe(
      wallet.address,
    );
    const identity = await tables(keyfob()).identity.findUniqueOrThrow({
      where: { provider_subject: { provider: "web3", subject: wallet.address } },
    });
    expect(identity.accountId).toBe(accountId);
  });
});
