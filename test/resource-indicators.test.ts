/**
 * Resource indicators (RFC 8707) with the libraries third-party clients use: oauth4webapi asks for a
 * registered resource at /auth, /par and /token (code, refresh, client_credentials), and checks the
 * access token as a resource server would (RFC 9068, `aud` the resource); openid-client gets a token
 * for one. A resource the client did not register, a malformed one, a second one, or one the grant
 * was not authorized for is invalid_target at every endpoint; without a resource `aud` stays the
 * client. The user's login is done through lib/; the HTTP requests reach the real route handlers.
 */
import * as oauth from "oauth4webapi";
import * as openid from "openid-client";
import { decodeJwt } from "jose";
import { describe, expect, it } from "vitest";
import { startAuthorization } from "@/lib/actions/authorize";
import { ALL_SCOPES, type Admin } from "@/lib/admin/access";
import { runAdminChange } from "@/lib/admin/changes";
import { updateClient } from "@/lib/clients/registry";
import { completeAuthorization } from "@/lib/interactions/interactions";
import { keyfob } from "@/lib/runtime";
import { ISSUER } from "./support/flow-a";
import { authorize, authorizeQuery, basic, FORM, google, registerApp, token, type App } from "./support/flow-b";
import { route } from "./support/routes";

const FLEET_API = "https://api.fleet.example.com";
const TELEMETRY_API = "https://telemetry.fleet.example.com/v2";

const handlers: Record<string, (request: Request) => Promise<Response>> = Object.fromEntries(
  ["/.well-known/openid-configuration", "/keys", "/token", "/par", "/token/introspect"].map((path) => [path, route(path)]),
);
/** Sends the libraries' requests to the route handlers, as Next would. */
const routeFetch = async (url: string, init?: RequestInit) => {
  const request = new Request(url, init);
  const handler = handlers[new URL(request.url).pathname];
  if (!handler) throw new Error(`no route for ${url}`);
  return handler(request);
};
const options = { [oauth.customFetch]: routeFetch, [oauth.allowInsecureRequests]: true };

const issuer = new URL(ISSUER);
const discover = async () =>
  oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { ...options, algorithm: "oidc" }));

/** A confidential client with refresh tokens, the management API and both resources registered. */
async function resourceClient(redirectUri?: string): Promise<App> {
  const app = await registerApp({
    confidential: true,
    redirectUri,
    settings: { refreshTokensAllowed: true, resources: [FLEET_API, TELEMETRY_API] },
  });
  await updateClient(keyfob().store, app.clientId, { managementApi: true, managementScopes: ["keyfob:read"] });
  return app;
}

/** The access token as a resource server at `audience` validates it (oauth4webapi, RFC 9068): its claims. */
async function validatedFor(as: oauth.AuthorizationServer, accessToken: string, audience: string) {
  const request = new Request(audience, { headers: { authorization: `Bearer ${accessToken}` } });
  return oauth.validateJwtAccessToken(as, request, audience, options);
}

/** What a refused token request's body says. */
const refusal = async (response: Response) => ({ status: response.status, error: ((await response.json()) as { error: string }).error });

describe("resource indicators with oauth4webapi", () => {
  it("authorizes and redeems a code for a resource: aud is the resource, the ID token's the client; introspection says so", async () => {
    const app = await resourceClient();
    const as = await discover();
    const client: oauth.Client = { client_id: app.clientId };
    const auth = oauth.ClientSecretBasic(app.secret!);
    const state = oauth.generateRandomState();
    const nonce = oauth.generateRandomNonce();
    const start = await startAuthorization(
      keyfob(),
      authorizeQuery(app, { scope: "openid email offline_access", state, nonce, resource: FLEET_API }),
    );
    if (start.kind !== "login") throw new Error(`expected the login page, got ${JSON.stringify(start)}`);
    const callback = new URL((await completeAuthorization(keyfob(), start.interactionId, { identity: google() })).location);

    const params = oauth.validateAuthResponse(as, client, callback, state);
    const response = await oauth.authorizationCodeGrantRequest(as, client, auth, params, app.redirectUri, oauth.nopkce, {
      ...options,
      additionalParameters: { resource: FLEET_API },
    });
    const tokens = await oauth.processAuthorizationCodeResponse(as, client, response, { expectedNonce: nonce, requireIdToken: true });
    expect(await validatedFor(as, tokens.access_token, FLEET_API)).toMatchObject({ aud: FLEET_API, client_id: app.clientId });
    expect(oauth.getValidatedIdTokenClaims(tokens)!.aud).toBe(app.clientId);

    const introspected = await oauth.processIntrospectionResponse(
      as,
      client,
      await oauth.introspectionRequest(as, client, auth, tokens.access_token, options),
    );
    expect(introspected).toMatchObject({ active: true, aud: FLEET_API, client_id: app.clientId });

    // Refreshing keeps the grant's resource, named again or not.
    const refreshed = await oauth.processRefreshTokenResponse(
      as,
      client,
      await oauth.refreshTokenGrantRequest(as, client, auth, tokens.refresh_token!, options),
    );
    expect(decodeJwt(refreshed.access_token).aud).toBe(FLEET_API);
    const again = await oauth.processRefreshTokenResponse(
      as,
      client,
      await oauth.refreshTokenGrantRequest(as, client, auth, refreshed.refresh_token!, {
        ...options,
        additionalParameters: { resource: FLEET_API },
      }),
    );
    expect(await validatedFor(as, again.access_token, FLEET_API)).toMatchObject({ aud: FLEET_API });

    // Another resource the client registered was not granted: invalid_target, and the token stays usable.
    const other = oauth.refreshTokenGrantRequest(as, client, auth, again.refresh_token!, {
      ...options,
      additionalParameters: { resource: TELEMETRY_API },
    });
    await expect(oauth.processRefreshTokenResponse(as, client, await other)).rejects.toMatchObject({ error: "invalid_target" });
    const still = await oauth.processRefreshTokenResponse(
      as,
      client,
      await oauth.refreshTokenGrantRequest(as, client, auth, again.refresh_token!, options),
    );
    expect(decodeJwt(still.access_token).aud).toBe(FLEET_API);

    // Once the client no longer registers it, the grant gives no more tokens for it.
    await updateClient(keyfob().store, app.clientId, { resources: [TELEMETRY_API] });
    const withdrawn = oauth.refreshTokenGrantRequest(as, client, auth, still.refresh_token!, options);
    await expect(oauth.processRefreshTokenResponse(as, client, await withdrawn)).rejects.toMatchObject({ error: "invalid_target" });
  });

  it("gets a client_credentials token for a registered resource, and invalid_target for any other", async () => {
    const app = await resourceClient();
    const as = await discover();
    const client: oauth.Client = { client_id: app.clientId };
    const auth = oauth.ClientSecretBasic(app.secret!);
    const granted = await oauth.processClientCredentialsResponse(
      as,
      client,
      await oauth.clientCredentialsGrantRequest(as, client, auth, { scope: "keyfob:read", resource: TELEMETRY_API }, options),
    );
    expect(await validatedFor(as, granted.access_token, TELEMETRY_API)).toMatchObject({ aud: TELEMETRY_API, client_id: app.clientId });

    const plain = await oauth.processClientCredentialsResponse(
      as,
      client,
      await oauth.clientCredentialsGrantRequest(as, client, auth, { scope: "keyfob:read" }, options),
    );
    expect(decodeJwt(plain.access_token).aud).toBe(app.clientId);

    for (const resource of ["https://evil.example.com", `${FLEET_API}#part`, "not a uri"]) {
      const refused = oauth.clientCredentialsGrantRequest(as, client, auth, { scope: "keyfob:read", resource }, options);
      await expect(oauth.processClientCredentialsResponse(as, client, await refused)).rejects.toMatchObject({
        error: "invalid_target",
        status: 400,
      });
    }
    const two = new URLSearchParams([
      ["scope", "keyfob:read"],
      ["resource", FLEET_API],
      ["resource", TELEMETRY_API],
    ]);
    const refused = oauth.clientCredentialsGrantRequest(as, client, auth, two, options);
    await expect(oauth.processClientCredentialsResponse(as, client, await refused)).rejects.toMatchObject({ error: "invalid_target" });
  });

  it("pushes a request for a resource to /par and redeems its code for it; an unregistered one is refused there", async () => {
    const app = await resourceClient();
    const as = await discover();
    const client: oauth.Client = { client_id: app.clientId };
    const auth = oauth.ClientSecretBasic(app.secret!);
    const request = { redirect_uri: app.redirectUri, response_type: "code", scope: "openid", state: "par-1" };

    const unregistered = oauth.pushedAuthorizationRequest(as, client, auth, { ...request, resource: "https://evil.example.com" }, options);
    await expect(oauth.processPushedAuthorizationResponse(as, client, await unregistered)).rejects.toMatchObject({
      error: "invalid_target",
      status: 400,
    });
    const twice = new URLSearchParams({ ...request, resource: FLEET_API });
    twice.append("resource", TELEMETRY_API);
    const two = oauth.pushedAuthorizationRequest(as, client, auth, twice, options);
    await expect(oauth.processPushedAuthorizationResponse(as, client, await two)).rejects.toMatchObject({ error: "invalid_target" });

    const pushed = await oauth.processPushedAuthorizationResponse(
      as,
      client,
      await oauth.pushedAuthorizationRequest(as, client, auth, { ...request, resource: TELEMETRY_API }, options),
    );
    const start = await startAuthorization(keyfob(), new URLSearchParams({ client_id: app.clientId, request_uri: pushed.request_uri }));
    if (start.kind !== "login") throw new Error(`expected the login page, got ${JSON.stringify(start)}`);
    const callback = new URL((await completeAuthorization(keyfob(), start.interactionId, { identity: google() })).location);
    const params = oauth.validateAuthResponse(as, client, callback, "par-1");
    const tokens = await oauth.processAuthorizationCodeResponse(
      as,
      client,
      await oauth.authorizationCodeGrantRequest(as, client, auth, params, app.redirectUri, oauth.nopkce, options),
    );
    expect(await validatedFor(as, tokens.access_token, TELEMETRY_API)).toMatchObject({ aud: TELEMETRY_API });
  });
});

describe("resource indicators refused", () => {
  it("answers invalid_target at /auth, to the redirect URI, for an unregistered, malformed or second resource", async () => {
    const app = await resourceClient();
    const cases: [string, string[]][] = [
      ["unregistered", ["https://evil.example.com"]],
      ["a fragment", [`${FLEET_API}#x`]],
      ["relative", ["/api"]],
      ["two", [FLEET_API, TELEMETRY_API]],
    ];
    for (const [name, resources] of cases) {
      const query = authorizeQuery(app, { state: `st-${name}` });
      for (const resource of resources) query.append("resource", resource);
      const start = await startAuthorization(keyfob(), query);
      if (start.kind !== "redirect") throw new Error(`${name}: expected a redirect, got ${JSON.stringify(start)}`);
      const location = new URL(start.location);
      expect(`${location.origin}${location.pathname}`, name).toBe(app.redirectUri.split("?")[0]);
      expect(Object.fromEntries(location.searchParams), name).toMatchObject({ error: "invalid_target", state: `st-${name}`, iss: ISSUER });
    }
  });

  it("answers invalid_target at /token for a resource the code was not authorized for, and the code still works", async () => {
    const app = await resourceClient();
    const code = (await authorize(app, google(), { resource: FLEET_API })).searchParams.get("code")!;
    expect(await refusal(await token(app, { code, resource: TELEMETRY_API }))).toEqual({ status: 400, error: "invalid_target" });
    expect(await refusal(await token(app, { code, resource: "https://evil.example.com" }))).toEqual({
      status: 400,
      error: "invalid_target",
    });
    const tokens = await (await token(app, { code })).json();
    expect(decodeJwt(tokens.access_token).aud).toBe(FLEET_API);

    const unscoped = (await authorize(app)).searchParams.get("code")!;
    expect(await refusal(await token(app, { code: unscoped, resource: FLEET_API }))).toEqual({ status: 400, error: "invalid_target" });
    // A second resource at /token: one audience per token.
    const body = new URLSearchParams({ grant_type: "authorization_code", code: unscoped, redirect_uri: app.redirectUri });
    body.append("resource", FLEET_API);
    body.append("resource", TELEMETRY_API);
    const two = await route("/token")(
      new Request(`${ISSUER}/token`, { method: "POST", headers: { ...FORM, authorization: basic(app) }, body }),
    );
    expect(await refusal(two)).toEqual({ status: 400, error: "invalid_target" });
  });

  it("keeps the client as aud without a resource, for a client with resources registered too", async () => {
    const app = await resourceClient();
    const tokens = await (await token(app, { code: (await authorize(app)).searchParams.get("code")! })).json();
    expect(decodeJwt(tokens.access_token).aud).toBe(app.clientId);
    expect(decodeJwt(tokens.id_token).aud).toBe(app.clientId);
  });
});

describe("registering resources", () => {
  const admin: Admin = { accountId: "0x0000000000000000000000000000000000000001", label: "resources-test", scopes: ALL_SCOPES };

  it("takes absolute URIs without a fragment, from a list or text, and refuses others with the field named", async () => {
    const app = await registerApp();
    const set = (resources: unknown) => runAdminChange(keyfob(), admin, "client.update", { clientId: app.clientId, resources });
    expect(await set(`${FLEET_API}\n${TELEMETRY_API} ${FLEET_API}`)).toMatchObject({
      ok: true,
      value: { settings: { resources: [FLEET_API, TELEMETRY_API] } },
    });
    for (const wrong of [[`${FLEET_API}#x`], ["/relative"], "api.example.com"]) {
      expect(await set(wrong)).toMatchObject({ ok: false, status: 400, fieldErrors: { resources: expect.any(String) } });
    }
    expect((await keyfob().store.clients.find(app.clientId))!.resources).toEqual([FLEET_API, TELEMETRY_API]);
    expect(await set([])).toMatchObject({ ok: true, value: { settings: { resources: [] } } });
  });
});

describe("resource indicators with openid-client", () => {
  it("gets tokens for a resource with the code flow", async () => {
    // openid-client sends the callback's URL without its query as redirect_uri.
    const app = await resourceClient("https://fleet.example.com/openid-client");
    const config = await openid.discovery(issuer, app.clientId, app.secret, openid.ClientSecretBasic(app.secret!), {
      execute: [openid.allowInsecureRequests],
      [openid.customFetch]: (url, init) => routeFetch(url, init as RequestInit),
    });
    const state = openid.randomState();
    const url = openid.buildAuthorizationUrl(config, { redirect_uri: app.redirectUri, scope: "openid", state, resource: FLEET_API });
    const start = await startAuthorization(keyfob(), url.searchParams);
    if (start.kind !== "login") throw new Error(`expected the login page, got ${JSON.stringify(start)}`);
    const callback = new URL((await completeAuthorization(keyfob(), start.interactionId, { identity: google() })).location);
    const tokens = await openid.authorizationCodeGrant(config, callback, { expectedState: state }, { resource: FLEET_API });
    expect(decodeJwt(tokens.access_token).aud).toBe(FLEET_API);
    expect(tokens.claims()!.aud).toBe(app.clientId);
  });
});
