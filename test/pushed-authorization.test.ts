/**
 * Pushed authorization requests (RFC 9126) with a real client library: openid-client pushes the
 * request to /par (authenticated with its secret), sends the browser to /auth with the request_uri
 * alone and completes the code flow. Then what must be refused: a client required to use PAR
 * without it, a request_uri used twice, an expired one, another client's, and bad pushes (JSON
 * errors, never redirects). The user's login itself is done through lib/, as in openid-client.test.ts.
 */
import * as client from "openid-client";
import { describe, expect, it } from "vitest";
import { startAuthorization } from "@/lib/actions/authorize";
import { addRedirectUri, createClient, rotateClientSecret, updateClient } from "@/lib/clients/registry";
import { completeAuthorization } from "@/lib/interactions/interactions";
import { rawConnection } from "@/lib/store";
import { keyfob } from "@/lib/runtime";
import { ISSUER } from "./support/flow-a";
import { route } from "./support/routes";

const discoveryRoute = route("/.well-known/openid-configuration");
const keysRoute = route("/keys");
const parRoute = route("/par");
const tokenRoute = route("/token");

const routes: Record<string, (request: Request) => Promise<Response> | Response> = {
  "/.well-known/openid-configuration": () => discoveryRoute(new Request(`${ISSUER}/.well-known/openid-configuration`)),
  "/keys": () => keysRoute(new Request(`${ISSUER}/keys`)),
  "/token": tokenRoute,
  "/par": parRoute,
};

/** Sends the library's requests to the route handlers, as the server would. */
const routeFetch: client.CustomFetch = async (url, init) => {
  const request = new Request(url, init as RequestInit);
  const handler = routes[new URL(request.url).pathname];
  if (!handler) throw new Error(`no route for ${url}`);
  return handler(request);
};

const REDIRECT_URI = "https://rp.example.com/par-callback";

/** A confidential client with a redirect URI, and openid-client configured for it from discovery. */
async function confidentialClient(name: string, settings: { requirePushedAuthorizationRequests?: boolean } = {}) {
  const { store } = keyfob();
  const app = await createClient(store, { name });
  await addRedirectUri(store, app.id, REDIRECT_URI);
  const secret = await rotateClientSecret(keyfob(), app.id);
  await updateClient(store, app.id, settings);
  const config = await client.discovery(new URL(ISSUER), app.id, undefined, client.ClientSecretBasic(secret), {
    execute: [client.allowInsecureRequests],
    [client.customFetch]: routeFetch,
  });
  config[client.customFetch] = routeFetch;
  return { id: app.id, secret, config };
}

/** A request pushed by openid-client: the authorization URL it built and the checks of its answer. */
async function pushed(config: client.Configuration, extra: Record<string, string> = {}) {
  const verifier = client.randomPKCECodeVerifier();
  const state = client.randomState();
  const nonce = client.randomNonce();
  const url = await client.buildAuthorizationUrlWithPAR(config, {
    redirect_uri: REDIRECT_URI,
    scope: "openid email",
    state,
    nonce,
    code_challenge: await client.calculatePKCECodeChallenge(verifier),
    code_challenge_method: "S256",
    ...extra,
  });
  return { url, checks: { pkceCodeVerifier: verifier, expectedState: state, expectedNonce: nonce } };
}

const identity = { provider: "apple", subject: "apple-par-001", email: "par@example.com", emailVerified: true } as const;

const post = (body: Record<string, string>, headers: Record<string, string> = {}) =>
  parRoute(
    new Request(`${ISSUER}/par`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
      body: new URLSearchParams(body),
    }),
  );
const basic = (id: string, secret: string) => ({
  authorization: `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString("base64")}`,
});

describe("pushed authorization requests (RFC 9126)", () => {
  it("discovery names the endpoint, and openid-client completes the code flow through it", async () => {
    const { config } = await confidentialClient("PAR client", { requirePushedAuthorizationRequests: true });
    expect(config.serverMetadata().pushed_authorization_request_endpoint).toBe(`${ISSUER}/par`);
    expect(config.serverMetadata().require_pushed_authorization_requests).toBe(false);

    const { url, checks } = await pushed(config);
    expect(url.origin + url.pathname).toBe(`${ISSUER}/auth`);
    expect([...url.searchParams.keys()].sort()).toEqual(["client_id", "request_uri"]);
    expect(url.searchParams.get("request_uri")).toMatch(/^urn:ietf:params:oauth:request_uri:[A-Za-z0-9_-]{43}$/);

    const start = await startAuthorization(keyfob(), url.searchParams);
    if (start.kind !== "login") throw new Error(`expected the login page, got ${JSON.stringify(start)}`);
    expect(start.scope).toEqual(["openid", "email"]);
    const callback = new URL((await completeAuthorization(keyfob(), start.interactionId, { identity })).location);
    const tokens = await client.authorizationCodeGrant(config, callback, checks);
    expect(tokens.claims()).toMatchObject({ iss: ISSUER, aud: config.clientMetadata().client_id, nonce: checks.expectedNonce });
    expect(tokens.claims()?.email).toBe("par@example.com");
  });

  it("answers 201 with a short-lived request_uri; Basic or client_secret_post", async () => {
    const { id, secret } = await confidentialClient("PAR post client");
    const params = { redirect_uri: REDIRECT_URI, response_type: "code", scope: "openid", code_challenge: "x".repeat(43) };
    for (const response of [
      await post({ client_id: id, client_secret: secret, ...params, code_challenge_method: "S256" }),
      await post({ ...params, code_challenge_method: "S256" }, basic(id, secret)),
    ]) {
      expect(response.status).toBe(201);
      expect(response.headers.get("cache-control")).toContain("no-store");
      const body = await response.json();
      expect(body.expires_in).toBeGreaterThanOrEqual(60);
      expect(body.expires_in).toBeLessThanOrEqual(90);
    }
    // The secret that authenticated the push is not kept with the request.
    const { rows } = await rawConnection(keyfob().store).pool.query(
      "SELECT parameters FROM pushed_authorization_requests WHERE client_id = $1",
      [id],
    );
    expect(rows).toHaveLength(2);
    for (const row of rows) expect(row.parameters).not.toContain("client_secret");
  });

  it("refuses a client required to use PAR when it sends its parameters to /auth itself", async () => {
    const { id, config } = await confidentialClient("PAR-only client", { requirePushedAuthorizationRequests: true });
    const { url } = await pushed(config);
    const direct = new URLSearchParams({ client_id: id, redirect_uri: REDIRECT_URI, response_type: "code", scope: "openid", state: "s1" });
    const start = await startAuthorization(keyfob(), direct);
    if (start.kind !== "redirect") throw new Error(`expected a redirect, got ${JSON.stringify(start)}`);
    const location = new URL(start.location);
    expect(location.searchParams.get("error")).toBe("invalid_request");
    expect(location.searchParams.get("error_description")).toContain("PAR");
    expect(location.searchParams.get("state")).toBe("s1");
    // The pushed one still works, and the same client without the requirement may do either.
    expect((await startAuthorization(keyfob(), url.searchParams)).kind).toBe("login");
    await updateClient(keyfob().store, id, { requirePushedAuthorizationRequests: false });
    expect((await startAuthorization(keyfob(), direct)).kind).toBe("login");
  });

  it("uses a request_uri once, only before it expires, and only for the client that pushed it", async () => {
    const { config } = await confidentialClient("PAR replay client");
    const other = await confidentialClient("PAR other client");

    const { url } = await pushed(config);
    expect((await startAuthorization(keyfob(), url.searchParams)).kind).toBe("login");
    expect(await startAuthorization(keyfob(), url.searchParams)).toEqual({ kind: "error", reason: { code: "unknown_request_uri" } });

    const stolen = (await pushed(config)).url;
    const asOther = new URLSearchParams({ client_id: other.id, request_uri: stolen.searchParams.get("request_uri")! });
    expect(await startAuthorization(keyfob(), asOther)).toEqual({ kind: "error", reason: { code: "unknown_request_uri" } });
    // Another client's attempt does not use it up.
    expect((await startAuthorization(keyfob(), stolen.searchParams)).kind).toBe("login");

    const late = (await pushed(config)).url;
    await rawConnection(keyfob().store).pool.query(
      "UPDATE pushed_authorization_requests SET expires_at = now() - interval '1 second' WHERE client_id = $1 AND used_at IS NULL",
      [config.clientMetadata().client_id],
    );
    expect(await startAuthorization(keyfob(), late.searchParams)).toEqual({ kind: "error", reason: { code: "unknown_request_uri" } });

    const made = new URLSearchParams({ client_id: other.id, request_uri: "urn:ietf:params:oauth:request_uri:not-one-of-ours" });
    expect(await startAuthorization(keyfob(), made)).toEqual({ kind: "error", reason: { code: "unknown_request_uri" } });
  });

  it("takes only the pushed parameters: those sent to /auth beside the request_uri are ignored", async () => {
    const { config } = await confidentialClient("PAR ignore client");
    const { url } = await pushed(config);
    url.searchParams.set("scope", "openid offline_access");
    url.searchParams.set("redirect_uri", "https://attacker.example.com/");
    const start = await startAuthorization(keyfob(), url.searchParams);
    if (start.kind !== "login") throw new Error("expected the login page");
    expect(start.scope).toEqual(["openid", "email"]);
  });

  it("refuses bad pushes with JSON errors, as /auth would refuse the request", async () => {
    const { id, secret } = await confidentialClient("PAR refusals client");
    const auth = basic(id, secret);
    const ok = { redirect_uri: REDIRECT_URI, response_type: "code", scope: "openid" };
    const refusal = async (response: Response) => ({ status: response.status, ...(await response.json()) });

    expect(await refusal(await post(ok, basic(id, "wrong")))).toMatchObject({ status: 401, error: "invalid_client" });
    expect(await refusal(await post({ ...ok, client_id: id }))).toMatchObject({ status: 401, error: "invalid_client" });
    expect(await refusal(await post({ ...ok, redirect_uri: "https://elsewhere.example.com/" }, auth))).toMatchObject({
      status: 400,
      error: "invalid_request",
      error_description: expect.stringContaining("redirect_uri"),
    });
    expect(await refusal(await post({ ...ok, response_type: "token" }, auth))).toMatchObject({
      status: 400,
      error: "unsupported_response_type",
    });
    expect(await refusal(await post({ ...ok, request_uri: "urn:ietf:params:oauth:request_uri:x" }, auth))).toMatchObject({
      status: 400,
      error: "request_uri_not_supported",
    });
    expect(await refusal(await post({ ...ok, request: "eyJhbGciOiJub25lIn0.e30." }, auth))).toMatchObject({
      status: 400,
      error: "request_not_supported",
    });
    expect(await refusal(await post({ ...ok, response_mode: "form_post" }, auth))).toMatchObject({ status: 400, error: "invalid_request" });
    expect(await refusal(await post({ ...ok, code_challenge: "short", code_challenge_method: "S256" }, auth))).toMatchObject({
      status: 400,
      error: "invalid_request",
    });

    // A public client pushes with its client_id alone, and must use PKCE as at /auth.
    const { store } = keyfob();
    const spa = await createClient(store, { name: "PAR public client" });
    await addRedirectUri(store, spa.id, REDIRECT_URI);
    expect(await refusal(await post({ ...ok, client_id: spa.id }))).toMatchObject({
      status: 400,
      error: "invalid_request",
      error_description: expect.stringContaining("code_challenge"),
    });
    const challenge = await client.calculatePKCECodeChallenge(client.randomPKCECodeVerifier());
    const accepted = await post({ ...ok, client_id: spa.id, code_challenge: challenge, code_challenge_method: "S256" });
    expect(accepted.status).toBe(201);
  });
});
