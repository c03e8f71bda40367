/**
 * A real DPoP client, openid-client, against Keyfob with DPOP_NONCE_REQUIRED: discovery, the
 * authorization code grant with PKCE and a DPoP proof (the library answers use_dpop_nonce with the
 * DPoP-Nonce it was given and retries), userinfo and refresh with proofs of the same key. The
 * token it got is then refused to whoever has it without the key. Its HTTP requests reach the
 * real route handlers of an instance of their own; the user's login is done through lib/. A request
 * pushed to /par with a proof (RFC 9449 10.1) binds the code to that key. The
 * dashboard's DPoP snippet (lib/admin/integration.ts) is shown where it should be, and run as written.
 */
import * as client from "openid-client";
import { calculateJwkThumbprint, decodeJwt, exportJWK } from "jose";
import ts from "typescript";
import { afterAll, expect, it } from "vitest";
import { startAuthorization } from "@/lib/actions/authorize";
import { integration } from "@/lib/admin/integration";
import { addRedirectUri, createClient, updateClient } from "@/lib/clients/registry";
import { completeAuthorization } from "@/lib/interactions/interactions";
import { createKeyfob } from "@/lib/keyfob";
import { keyfob } from "@/lib/runtime";
import { ISSUER } from "./support/flow-a";
import { routesOn, route } from "./support/routes";

const discoveryRoute = route("/.well-known/openid-configuration");
const keysRoute = route("/keys");

const strict = createKeyfob({ ...keyfob().config, dpopNonceRequired: true, recoveryThreads: 0 }, keyfob().store);
afterAll(() => strict.close());
const routes = routesOn(strict);
const handlers: Record<string, (request: Request) => Promise<Response>> = {
  "/.well-known/openid-configuration": () => discoveryRoute(new Request(`${ISSUER}/.well-known/openid-configuration`)),
  "/keys": () => keysRoute(new Request(`${ISSUER}/keys`)),
  "/token": routes.token,
  "/par": routes.par,
  "/userinfo": routes.userinfo,
};
const seen: { path: string; status: number; dpop: boolean }[] = [];
const routeFetch = async (url: string, init: client.CustomFetchOptions) => {
  const request = new Request(url, init as RequestInit);
  const path = new URL(request.url).pathname;
  const response = await handlers[path](request);
  seen.push({ path, status: response.status, dpop: request.headers.has("dpop") });
  return response;
};

it("completes the code flow, userinfo and refresh with DPoP; the token is worthless without the key", async () => {
  const app = await createClient(strict.store, { name: "DPoP client" });
  const redirectUri = "https://rp.example.com/dpop";
  await addRedirectUri(strict.store, app.id, redirectUri);
  await updateClient(strict.store, app.id, { refreshTokensAllowed: true });

  const config = await client.discovery(new URL(ISSUER), app.id, undefined, client.None(), {
    execute: [client.allowInsecureRequests],
    [client.customFetch]: routeFetch,
  });
  expect(config.serverMetadata().dpop_signing_alg_values_supported).toContain("ES256");
  const DPoP = client.getDPoPHandle(config, await client.randomDPoPKeyPair("ES256"));

  const verifier = client.randomPKCECodeVerifier();
  const state = client.randomState();
  const url = client.buildAuthorizationUrl(config, {
    redirect_uri: redirectUri,
    scope: "openid email offline_access",
    state,
    code_challenge: await client.calculatePKCECodeChallenge(verifier),
    code_challenge_method: "S256",
  });
  const start = await startAuthorization(strict, url.searchParams);
  if (start.kind !== "login") throw new Error("expected the login page");
  const identity = { provider: "google", subject: "google-dpop-001", email: "dpop@example.com", emailVerified: true } as const;
  const callback = new URL((await completeAuthorization(strict, start.interactionId, { identity })).location);

  const tokens = await client.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedState: state }, undefined, {
    DPoP,
  });
  expect(tokens.token_type).toBe("dpop");
  const jkt = (decodeJwt(tokens.access_token).cnf as { jkt: string }).jkt;
  expect(jkt).toMatch(/^[A-Za-z0-9_-]{43}$/);
  // The first try had no nonce: the library retried with the one Keyfob sent.
  expect(seen.filter((s) => s.path === "/token").map((s) => s.status)).toEqual([400, 200]);

  const sub = tokens.claims()!.sub;
  const info = await client.fetchUserInfo(config, tokens.access_token, sub, { DPoP });
  expect(info).toMatchObject({ sub, email: "dpop@example.com" });

  const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token!, undefined, { DPoP });
  expect((decodeJwt(refreshed.access_token).cnf as { jkt: string }).jkt).toBe(jkt);

  // Without the key: as Bearer, or with a proof by another key.
  const bearer = await routes.userinfo(
    new Request(`${ISSUER}/userinfo`, { headers: { authorization: `Bearer ${refreshed.access_token}` } }),
  );
  expect(bearer.status).toBe(401);
  const thief = client.getDPoPHandle(config, await client.randomDPoPKeyPair("ES256"));
  await expect(client.fetchUserInfo(config, refreshed.access_token, sub, { DPoP: thief })).rejects.toThrow();
  await expect(client.refreshTokenGrant(config, refreshed.refresh_token!, undefined, { DPoP: thief })).rejects.toMatchObject({
    error: "invalid_grant",
    error_description: expect.stringMatching(/bound to a DPoP key/),
  });
});

it("binds the code of a request pushed with a proof to its key: redeemed with another key it is refused (RFC 9449 10.1)", async () => {
  const app = await createClient(strict.store, { name: "DPoP PAR client" });
  const redirectUri = "https://rp.example.com/dpop-par";
  await addRedirectUri(strict.store, app.id, redirectUri);
  const config = await client.discovery(new URL(ISSUER), app.id, undefined, client.None(), {
    execute: [client.allowInsecureRequests],
    [client.customFetch]: routeFetch,
  });
  const keyPair = await client.randomDPoPKeyPair("ES256");
  const DPoP = client.getDPoPHandle(config, keyPair);
  const verifier = client.randomPKCECodeVerifier();
  const state = client.randomState();
  seen.length = 0;
  const url = await client.buildAuthorizationUrlWithPAR(
    config,
    {
      redirect_uri: redirectUri,
      scope: "openid email",
      state,
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: "S256",
    },
    { DPoP },
  );
  // The push wanted the server's nonce too; the library retried with it.
  expect(seen.filter((s) => s.path === "/par")).toEqual([
    { path: "/par", status: 400, dpop: true },
    { path: "/par", status: 201, dpop: true },
  ]);
  expect([...url.searchParams.keys()].sort()).toEqual(["client_id", "request_uri"]);
  const start = await startAuthorization(strict, url.searchParams);
  if (start.kind !== "login") throw new Error("expected the login page");
  const identity = { provider: "google", subject: "google-dpop-par", email: "dpop-par@example.com", emailVerified: true } as const;
  const callback = new URL((await completeAuthorization(strict, start.interactionId, { identity })).location);
  const checks = { pkceCodeVerifier: verifier, expectedState: state };

  const other = client.getDPoPHandle(config, await client.randomDPoPKeyPair("ES256"));
  await expect(client.authorizationCodeGrant(config, callback, checks, undefined, { DPoP: other })).rejects.toMatchObject({
    error: "invalid_grant",
    error_description: expect.stringMatching(/bound to a DPoP key/),
  });
  await expect(client.authorizationCodeGrant(config, callback, checks)).rejects.toMatchObject({ error: "invalid_grant" });
  const tokens = await client.authorizationCodeGrant(config, callback, checks, undefined, { DPoP });
  expect(tokens.token_type).toBe("dpop");
  expect(decodeJwt(tokens.access_token).cnf).toEqual({ jkt: await calculateJwkThumbprint(await exportJWK(keyPair.publicKey)) });
});

it("the dashboard shows its DPoP snippet to clients that must use DPoP and to public ones, and the snippet works as written", async () => {
  const snippet = (confidential: boolean, dpopBoundAccessTokens: boolean) =>
    integration(ISSUER, { id: "kf_x", confidential, managementApi: false, dpopBoundAccessTokens, redirectUris: [] }).snippets.dpop;
  expect(snippet(true, false)).toBeUndefined();
  expect(snippet(false, false)).toMatch(/Optional for this client/);
  expect(snippet(true, true)).toMatch(/must send a DPoP proof/);

  const app = await createClient(strict.store, { name: "DPoP snippet client" });
  const redirectUri = "https://rp.example.com/dpop-snippet";
  await addRedirectUri(strict.store, app.id, redirectUri);
  await updateClient(strict.store, app.id, { dpopBoundAccessTokens: true });
  const code = snippet(false, true)!;
  expect(code).toContain("client.getDPoPHandle(config, await client.randomDPoPKeyPair())");

  // The openid-client snippet's config and login, then the DPoP snippet's lines as a function of them.
  const config = await client.discovery(new URL(ISSUER), app.id, undefined, client.None(), {
    execute: [client.allowInsecureRequests],
    [client.customFetch]: routeFetch,
  });
  const code_verifier = client.randomPKCECodeVerifier();
  const state = client.randomState();
  const url = client.buildAuthorizationUrl(config, {
    redirect_uri: redirectUri,
    scope: "openid email",
    state,
    code_challenge: await client.calculatePKCECodeChallenge(code_verifier),
    code_challenge_method: "S256",
  });
  const start = await startAuthorization(strict, url.searchParams);
  if (start.kind !== "login") throw new Error("expected the login page");
  const identity = { provider: "google", subject: "google-dpop-002", email: "snippet@example.com", emailVerified: true } as const;
  const currentUrl = new URL((await completeAuthorization(strict, start.interactionId, { identity })).location);
  const body = ts.transpileModule(`${code}\nreturn { tokens, userinfo };`, {
    compilerOptions: { target: ts.ScriptTarget.ES2022 },
  }).outputText;
  const run = new (Object.getPrototypeOf(async () => {}).constructor)("client", "config", "currentUrl", "code_verifier", "state", body);
  const { tokens, userinfo } = await run(client, config, currentUrl, code_verifier, state);
  expect(tokens.token_type).toBe("dpop");
  expect(decodeJwt(tokens.access_token).cnf).toEqual({ jkt: expect.stringMatching(/^[\w-]{43}$/) });
  expect(userinfo).toMatchObject({ email: "snippet@example.com" });
});
