/**
 * A standard OpenID client library (oauth4webapi, by the author of openid-client) completes Flow B
 * from Keyfob's discovery document: PKCE, state, nonce, the iss response parameter (RFC 9207), the
 * ID token's claims, userinfo and revocation. Its HTTP requests reach the real route handlers.
 * The user's login itself (a browser step) is done through lib/ here; e2e/ does it in Chromium.
 * openid-client reads a refused client authentication as invalid_client.
 */
import * as oauth from "oauth4webapi";
import * as openid from "openid-client";
import { createLocalJWKSet, jwtVerify } from "jose";
import { describe, expect, it } from "vitest";
import { startAuthorization } from "@/lib/actions/authorize";
import { completeAuthorization } from "@/lib/interactions/interactions";
import { addRedirectUri, createClient, rotateClientSecret, updateClient } from "@/lib/clients/registry";
import { keyfob } from "@/lib/runtime";
import { ISSUER } from "./support/flow-a";
import { route } from "./support/routes";

const discoveryRoute = route("/.well-known/openid-configuration");
const metadataRoute = route("/.well-known/oauth-authorization-server");
const keysRoute = route("/keys");
const revokeRoute = route("/token/revoke");
const tokenRoute = route("/token");
const userinfoRoute = route("/userinfo");

const routes: Record<string, (request: Request) => Promise<Response> | Response> = {
  "/.well-known/openid-configuration": () => discoveryRoute(new Request("http://localhost/.well-known/openid-configuration")),
  "/.well-known/oauth-authorization-server": metadataRoute,
  "/keys": () => keysRoute(new Request("http://localhost/keys")),
  "/token": tokenRoute,
  "/userinfo": userinfoRoute,
  "/token/revoke": revokeRoute,
};

/** Sends the library's requests to the route handlers, as Next would. */
const routeFetch = async (url: string, init: RequestInit) => {
  const request = new Request(url, init);
  const handler = routes[new URL(request.url).pathname];
  if (!handler) throw new Error(`no route for ${url}`);
  return handler(request);
};
const options = { [oauth.customFetch]: routeFetch, [oauth.allowInsecureRequests]: true };

describe("oauth4webapi against Keyfob", () => {
  it("discovers, authorizes with PKCE, exchanges the code, validates the ID token, calls userinfo and revokes", async () => {
    const app = await createClient(keyfob().store, { name: "Standard client" });
    const redirectUri = "https://rp.example.com/callback";
    await addRedirectUri(keyfob().store, app.id, redirectUri);

    const issuer = new URL(ISSUER);
    const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { ...options, algorithm: "oidc" }));
    expect(as.code_challenge_methods_supported).toEqual(["S256"]);
    const client: oauth.Client = { client_id: app.id };

    const verifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const nonce = oauth.generateRandomNonce();
    const authorizationUrl = new URL(as.authorization_endpoint!);
    authorizationUrl.search = new URLSearchParams({
      client_id: app.id,
      redirect_uri: redirectUri,
      response_type: "code",
      scope: "openid email",
      state,
      nonce,
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: "S256",
    }).toString();

    const start = await startAuthorization(keyfob(), authorizationUrl.searchParams);
    if (start.kind !== "login") throw new Error("expected the login page");
    const identity = { provider: "apple", subject: "apple-001", email: "driver@example.com", emailVerified: true } as const;
    const callback = new URL((await completeAuthorization(keyfob(), start.interactionId, { identity })).location);

    const params = oauth.validateAuthResponse(as, client, callback, state); // checks iss too
    const response = await oauth.authorizationCodeGrantRequest(as, client, oauth.None(), params, redirectUri, verifier, options);
    const tokens = await oauth.processAuthorizationCodeResponse(as, client, response, { expectedNonce: nonce, requireIdToken: true });
    const claims = oauth.getValidatedIdTokenClaims(tokens)!;
    expect(claims).toMatchObject({
      iss: ISSUER,
      aud: app.id,
      nonce,
      provider_id: "apple",
      email: "driver@example.com",
      email_verified: true,
    });

    // The library checks claims; the signature is checked here against jwks_uri.
    const jwks = createLocalJWKSet(await (await routeFetch(as.jwks_uri!, {})).json());
    await expect(jwtVerify(tokens.id_token!, jwks, { issuer: ISSUER, audience: app.id })).resolves.toBeDefined();

    const info = await oauth.processUserInfoResponse(
      as,
      client,
      claims.sub,
      await oauth.userInfoRequest(as, client, tokens.access_token, options),
    );
    expect(info).toMatchObject({ sub: claims.sub, email: "driver@example.com", provider_id: "apple" });

    const revoked = await oauth.revocationRequest(as, client, oauth.None(), tokens.access_token, options);
    await oauth.processRevocationResponse(revoked);
    const after = await oauth.userInfoRequest(as, client, tokens.access_token, options);
    expect(after.status).toBe(401);
  });

  it("discovers the authorization server metadata at /.well-known/oauth-authorization-server (RFC 8414), its issuer checked", async () => {
    const issuer = new URL(ISSUER);
    const response = await oauth.discoveryRequest(issuer, { ...options, algorithm: "oauth2" });
    const as = await oauth.processDiscoveryResponse(issuer, response);
    expect(as).toEqual(await (await routeFetch(`${ISSUER}/.well-known/openid-configuration`, {})).json());
  });

  it("gets a refresh token with offline_access, refreshes it (rotation, same subject and auth_time), and revokes it", async () => {
    const app = await createClient(keyfob().store, { name: "Offline client" });
    const redirectUri = "https://rp.example.com/offline";
    await addRedirectUri(keyfob().store, app.id, redirectUri);
    await updateClient(keyfob().store, app.id, { refreshTokensAllowed: true });

    const issuer = new URL(ISSUER);
    const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { ...options, algorithm: "oidc" }));
    const client: oauth.Client = { client_id: app.id };
    const verifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const authorizationUrl = new URL(as.authorization_endpoint!);
    authorizationUrl.search = new URLSearchParams({
      client_id: app.id,
      redirect_uri: redirectUri,
      response_type: "code",
      scope: "openid email offline_access",
      state,
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: "S256",
    }).toString();
    const start = await startAuthorization(keyfob(), authorizationUrl.searchParams);
    if (start.kind !== "login") throw new Error("expected the login page");
    const identity = { provider: "google", subject: "google-offline-001", email: "fleet@example.com", emailVerified: true } as const;
    const callback = new URL((await completeAuthorization(keyfob(), start.interactionId, { identity })).location);

    const params = oauth.validateAuthResponse(as, client, callback, state);
    const response = await oauth.authorizationCodeGrantRequest(as, client, oauth.None(), params, redirectUri, verifier, options);
    const tokens = await oauth.processAuthorizationCodeResponse(as, client, response, { requireIdToken: true });
    expect(tokens.refresh_token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const claims = oauth.getValidatedIdTokenClaims(tokens)!;

    const refreshed = await oauth.processRefreshTokenResponse(
      as,
      client,
      await oauth.refreshTokenGrantRequest(as, client, oauth.None(), tokens.refresh_token!, options),
    );
    expect(refreshed.refresh_token).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(refreshed.refresh_token).not.toBe(tokens.refresh_token);
    const renewed = oauth.getValidatedIdTokenClaims(refreshed)!;
    expect(renewed).toMatchObject({ iss: ISSUER, aud: app.id, sub: claims.sub, auth_time: claims.auth_time, email: "fleet@example.com" });
    expect(renewed.nonce).toBeUndefined();
    const info = await oauth.processUserInfoResponse(
      as,
      client,
      claims.sub,
      await oauth.userInfoRequest(as, client, refreshed.access_token, options),
    );
    expect(info).toMatchObject({ sub: claims.sub, email: "fleet@example.com" });

    // RFC 7009: revoking the refresh token revokes its grant, the access tokens issued with it included.
    const revoked = await oauth.revocationRequest(as, client, oauth.None(), refreshed.refresh_token!, {
      ...options,
      additionalParameters: { token_type_hint: "refresh_token" },
    });
    await oauth.processRevocationResponse(revoked);
    expect((await oauth.userInfoRequest(as, client, refreshed.access_token, options)).status).toBe(401);
    const refused = oauth.processRefreshTokenResponse(
      as,
      client,
      await oauth.refreshTokenGrantRequest(as, client, oauth.None(), refreshed.refresh_token!, options),
    );
    await expect(refused).rejects.toMatchObject({ error: "invalid_grant" });
  });
});

describe("openid-client against Keyfob", () => {
  it("reads a wrong client_secret_post as invalid_client: no Basic challenge for a client that did not use Basic", async () => {
    const app = await createClient(keyfob().store, { name: "Posting client" });
    await rotateClientSecret(keyfob(), app.id);
    const config = await openid.discovery(new URL(ISSUER), app.id, undefined, openid.ClientSecretPost("wrong"), {
      execute: [openid.allowInsecureRequests],
      [openid.customFetch]: (url, init) => routeFetch(url, init as RequestInit),
    });
    const refused = await openid.clientCredentialsGrant(config).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(openid.ResponseBodyError);
    expect(refused).toMatchObject({ error: "invalid_client", status: 401 });
  });
});
