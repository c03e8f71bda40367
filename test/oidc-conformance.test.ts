/**
 * The OpenID Foundation's "Basic OP" and "Config OP" plans (openid-certification/conformance-suite,
 * static client with client_secret_basic, code flow), module by module, against the real route
 * handlers: each `it` names the module whose behaviour it checks. oauth4webapi plays the relying
 * party; the login itself (a browser step there) goes through lib/ here. RP-Initiated Logout's
 * modules are in test/logout.test.ts, hosted-page behaviour in e2e/.
 */
import { createLocalJWKSet, decodeJwt, jwtVerify } from "jose";
import * as oauth from "oauth4webapi";
import { beforeAll, describe, expect, it, vi } from "vitest";
import { GET as authorizeGet, POST as authorizePost } from "@/app/auth/route";
import type { LoginIdentity } from "@/lib/accounts/accounts";
import { startAuthorization, type AuthorizationStart } from "@/lib/actions/authorize";
import { completeAuthorization } from "@/lib/interactions/interactions";
import { addRedirectUri, createClient, rotateClientSecret, updateClient } from "@/lib/clients/registry";
import { keyfob } from "@/lib/runtime";
import { findSession, type LoginSession } from "@/lib/sessions/login-session";
import { ISSUER } from "./support/flow-a";
import { google } from "./support/flow-b";
import { route } from "./support/routes";

const discoveryRoute = route("/.well-known/openid-configuration");
const keysRoute = route("/keys");
const tokenRoute = route("/token");
const userinfoGet = route("/userinfo");
const userinfoPost = route("/userinfo");

vi.mock("@/app/auth/session-cookie", () => ({ currentLoginSession: async () => undefined }));
vi.mock("@/app/auth/login-cookie", () => ({ bindInteraction: async () => {} }));

const routes: Record<string, (request: Request) => Promise<Response> | Response> = {
  "/.well-known/openid-configuration": () => discoveryRoute(new Request("http://localhost/.well-known/openid-configuration")),
  "/keys": () => keysRoute(new Request("http://localhost/keys")),
  "/token": tokenRoute,
  "/userinfo": (request) => (request.method === "POST" ? userinfoPost(request) : userinfoGet(request)),
};
const options = {
  [oauth.customFetch]: async (url: string, init: RequestInit) => routes[new URL(url).pathname](new Request(url, init)),
  [oauth.allowInsecureRequests]: true,
};

const redirectUri = "https://rp.example.com/cb";
let as: oauth.AuthorizationServer;
let client: oauth.Client;
let secret: string;
const auth = () => oauth.ClientSecretBasic(secret);

beforeAll(async () => {
  const issuer = new URL(ISSUER);
  as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { ...options, algorithm: "oidc" }));
  const registered = await createClient(keyfob().store, { name: "Conformance" });
  await addRedirectUri(keyfob().store, registered.id, redirectUri);
  secret = await rotateClientSecret(keyfob(), registered.id);
  await updateClient(keyfob().store, registered.id, { refreshTokensAllowed: true });
  client = { client_id: registered.id };
});

function request(extra: Record<string, string> = {}) {
  return new URLSearchParams({
    client_id: client.client_id,
    redirect_uri: redirectUri,
    response_type: "code",
    scope: "openid email",
    state: "st",
    nonce: "nc",
    ...extra,
  });
}

function redirected(start: AuthorizationStart): URL {
  if (start.kind !== "redirect") throw new Error(`expected a redirect, got ${start.kind}`);
  return new URL(start.location);
}

/** Logs in on the hosted page (fresh, or with the session); returns the callback URL and the session. */
async function login(extra: Record<string, string> = {}, identity: LoginIdentity = google(), session?: LoginSession) {
  const start = await startAuthorization(keyfob(), request(extra), { session });
  if (start.kind !== "login") throw new Error(`expected the login page, got ${start.kind}`);
  const done = await completeAuthorization(keyfob(), start.interactionId, session ? { session } : { identity });
  return { callback: new URL(done.location), session: done.newSession ? await findSession(keyfob(), done.newSession.token) : session };
}

async function exchange(callback: URL, nonce: string | typeof oauth.expectNoNonce = "nc") {
  const params = oauth.validateAuthResponse(as, client, callback, "st");
  const response = await oauth.authorizationCodeGrantRequest(as, client, auth(), params, redirectUri, oauth.nopkce, options);
  return oauth.processAuthorizationCodeResponse(as, client, response, { expectedNonce: nonce, requireIdToken: true });
}

describe("Basic OP", () => {
  it("oidcc-server (and -client-secret-post): code flow with a confidential client, ID token validated", async () => {
    const result = await exchange((await login()).callback);
    const claims = oauth.getValidatedIdTokenClaims(result)!;
    expect(claims).toMatchObject({ iss: ISSUER, aud: client.client_id, nonce: "nc" });
    expect(typeof claims.auth_time).toBe("number");
    const post = await oauth.authorizationCodeGrantRequest(
      as,
      client,
      oauth.ClientSecretPost(secret),
      oauth.validateAuthResponse(as, client, (await login()).callback, "st"),
      redirectUri,
      oauth.nopkce,
      options,
    );
    expect(post.status).toBe(200);
  });

  it("oidcc-response-type-missing: invalid_request at the redirect URI, its description in RFC 6749's characters", async () => {
    const query = request();
    query.delete("response_type");
    const back = redirected(await startAuthorization(keyfob(), query));
    expect(back.searchParams.get("error")).toBe("invalid_request");
    expect(back.searchParams.get("error_description")).toMatch(/^[\x20\x21\x23-\x5b\x5d-\x7e]+$/);
  });

  it("oidcc-userinfo-get, -post-header, -post-body", async () => {
    const { access_token } = await exchange((await login()).callback);
    expect((await oauth.userInfoRequest(as, client, access_token, options)).status).toBe(200);
    const header = await userinfoPost(
      new Request(`${ISSUER}/userinfo`, { method: "POST", headers: { authorization: `Bearer ${access_token}` } }),
    );
    const body = await userinfoPost(
      new Request(`${ISSUER}/userinfo`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ access_token }),
      }),
    );
    expect([header.status, body.status]).toEqual([200, 200]);
  });

  it("oidcc-ensure-request-without-nonce-succeeds-for-code-flow, -other-scope-order-succeeds", async () => {
    const result = await exchange((await login({ nonce: "", scope: "email openid" })).callback, oauth.expectNoNonce);
    expect(oauth.getValidatedIdTokenClaims(result)!.nonce).toBeUndefined();
  });

  it("oidcc-display-page, -display-popup, -ui-locales, -claims-locales, -ensure-request-with-acr-values-succeeds, -ensure-request-with-unknown-parameter-succeeds, -login-hint", async () => {
    const accepted: Record<string, string>[] = [
      { display: "page" },
      { display: "popup" },
      { ui_locales: "de fr" },
      { claims_locales: "de" },
      { acr_values: "urn:mace:incommon:iap:silver" },
      { unknown_parameter: "x" },
      { login_hint: "someone@example.com" },
    ];
    for (const extra of accepted) {
      expect((await exchange((await login(extra)).callback)).access_token).toBeTruthy();
    }
  });

  it("oidcc-prompt-none-not-logged-in, -prompt-none-logged-in, -id-token-hint", async () => {
    expect(redirected(await startAuthorization(keyfob(), request({ prompt: "none" }))).searchParams.get("error")).toBe("login_required");
    const { callback, session } = await login();
    const firstResult = await exchange(callback);
    const first = oauth.getValidatedIdTokenClaims(firstResult)!;
    const silent = redirected(await startAuthorization(keyfob(), request({ prompt: "none" }), { session }));
    expect(oauth.getValidatedIdTokenClaims(await exchange(silent))!.sub).toBe(first.sub);
    const withHint = redirected(
      await startAuthorization(keyfob(), request({ prompt: "none", id_token_hint: firstResult.id_token! }), { session }),
    );
    expect(oauth.getValidatedIdTokenClaims(await exchange(withHint))!.sub).toBe(first.sub);
  });

  it("oidcc-prompt-login, -max-age-1, -max-age-10000: a new login when asked, auth_time says when", async () => {
    const { callback, session } = await login();
    const first = oauth.getValidatedIdTokenClaims(await exchange(callback))!;
    const aged: LoginSession = { ...session!, authTime: new Date(Date.now() - 5_000) }; // a login five seconds ago
    const fresher: Record<string, string>[] = [{ prompt: "login" }, { max_age: "1" }];
    for (const extra of fresher) {
      const start = await startAuthorization(keyfob(), request(extra), { session: aged });
      if (start.kind !== "login") throw new Error("expected the login page");
      await expect(completeAuthorization(keyfob(), start.interactionId, { session: aged })).rejects.toMatchObject({
        code: "invalid_request",
      });
      const fresh = await completeAuthorization(keyfob(), start.interactionId, { identity: aged.identity });
      expect(oauth.getValidatedIdTokenClaims(await exchange(new URL(fresh.location)))!.auth_time).toBeGreaterThanOrEqual(
        first.auth_time as number,
      );
    }
    const kept = redirected(await startAuthorization(keyfob(), request({ prompt: "none", max_age: "10000" }), { session: aged }));
    expect(oauth.getValidatedIdTokenClaims(await exchange(kept))!.auth_time).toBe(Math.floor(aged.authTime.getTime() / 1000));
  });

  it("oidcc-codereuse, -codereuse-30seconds: the second use fails and revokes the first use's access token", async () => {
    const { callback } = await login();
    const { access_token } = await exchange(callback);
    const params = oauth.validateAuthResponse(as, client, callback, "st");
    const again = await oauth.authorizationCodeGrantRequest(as, client, auth(), params, redirectUri, oauth.nopkce, options);
    expect(again.status).toBe(400);
    expect((await again.json()).error).toBe("invalid_grant");
    expect((await userinfoGet(new Request(`${ISSUER}/userinfo`, { headers: { authorization: `Bearer ${access_token}` } }))).status).toBe(
      401,
    );
  });

  it("oidcc-ensure-registered-redirect-uri: an error page, never a redirect", async () => {
    const start = await startAuthorization(keyfob(), request({ redirect_uri: "https://rp.example.com/other" }));
    expect(start.kind).toBe("error");
  });

  it("oidcc-ensure-post-request-succeeds: the authorization endpoint takes a form POST like a GET", async () => {
    const form = { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: request().toString() };
    const post = await authorizePost(new Request(`${ISSUER}/auth`, form));
    const get = await authorizeGet(new Request(`${ISSUER}/auth?${request()}`));
    expect([post.status, get.status]).toEqual([303, 303]);
    expect(post.headers.get("location")).toMatch(/^\/auth\/interaction\/[\w-]{43}$/);
  });

  it("oidcc-unsigned-request-object-supported-correctly-or-rejected-as-unsupported, -request-uri-unsigned: refused as unsupported, with the state", async () => {
    for (const [name, error] of [
      ["request", "request_not_supported"],
      ["request_uri", "request_uri_not_supported"],
    ]) {
      const back = redirected(
        await startAuthorization(
          keyfob(),
          request({ [name]: name === "request" ? "eyJhbGciOiJub25lIn0.e30." : "https://rp.example.com/r" }),
        ),
      );
      expect([back.searchParams.get("error"), back.searchParams.get("state")]).toEqual([error, "st"]);
    }
  });

  it("oidcc-refresh-token: offline_access gives a refresh token that rotates", async () => {
    const result = await exchange((await login({ scope: "openid offline_access", prompt: "consent" })).callback);
    expect(result.refresh_token).toBeTruthy();
    const refreshed = await oauth.processRefreshTokenResponse(
      as,
      client,
      await oauth.refreshTokenGrantRequest(as, client, auth(), result.refresh_token!, options),
    );
    expect(refreshed.refresh_token).not.toBe(result.refresh_token);
    expect(decodeJwt(refreshed.id_token!).sub).toBe(decodeJwt(result.id_token!).sub);
  });

  it("oidcc-ensure-request-with-valid-pkce-succeeds", async () => {
    const verifier = oauth.generateRandomCodeVerifier();
    const { callback } = await login({ code_challenge: await oauth.calculatePKCECodeChallenge(verifier), code_challenge_method: "S256" });
    const response = await oauth.authorizationCodeGrantRequest(
      as,
      client,
      auth(),
      oauth.validateAuthResponse(as, client, callback, "st"),
      redirectUri,
      verifier,
      options,
    );
    expect(response.status).toBe(200);
  });
});

describe("Config OP", () => {
  it("oidcc-discovery-endpoint-verification: the required metadata, and only what is implemented", async () => {
    expect(as).toMatchObject({
      issuer: ISSUER,
      response_types_supported: ["code"],
      subject_types_supported: ["public"],
      id_token_signing_alg_values_supported: ["RS256", "PS256", "ES256"],
      request_parameter_supported: false,
      request_uri_parameter_supported: false,
      claims_parameter_supported: false,
    });
    expect(as.scopes_supported).toContain("openid");
    for (const endpoint of ["authorization_endpoint", "token_endpoint", "userinfo_endpoint", "jwks_uri", "end_session_endpoint"] as const) {
      expect(String(as[endpoint])).toMatch(new RegExp(`^${ISSUER}/`));
    }
  });

  it("oidcc-idtoken-rs256, -idtoken-kid: signed with a published key named by its kid", async () => {
    const jwks = await (await keysRoute(new Request("http://localhost/keys"))).json();
    // RS256 keys, and PS256/ES256 ones once a client asked for them (test/signing-algs.test.ts): each bound to its alg.
    const rs256 = jwks.keys.filter((key: { alg: string }) => key.alg === "RS256");
    expect(rs256.length).toBeGreaterThan(0);
    for (const key of rs256) expect(key).toMatchObject({ kty: "RSA", use: "sig", kid: expect.any(String) });
    for (const key of jwks.keys) expect(["RS256", "PS256", "ES256"]).toContain(key.alg);
    const { id_token } = await exchange((await login()).callback);
    await jwtVerify(id_token!, createLocalJWKSet(jwks), { issuer: ISSUER, audience: client.client_id, algorithms: ["RS256"] });
  });
});
