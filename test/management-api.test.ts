/**
 * The management API (/api/admin/v1) through its real route handler and the real /token route:
 * a confidential client an admin allowed gets a short-lived `keyfob:admin` token with
 * client_credentials (RFC 6749 4.4), then reaches every resource (clients, redirect URIs, signers,
 * secrets, keys, accounts, sessions, tokens, audit, admins) with the dashboard's validation and
 * audit; a missing, invalid or revoked token is 401 with WWW-Authenticate, a token without the
 * scope or from a client no longer allowed is 403, all in Keyfob's error shape.
 */
import { decodeJwt, decodeProtectedHeader } from "jose";
import { ALL_SCOPES } from "@/lib/admin/access";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { beforeAll, describe, expect, it } from "vitest";
import { resolveAccount } from "@/lib/accounts/accounts";
import { startAuthorization } from "@/lib/actions/authorize";
import { recordConsent } from "@/lib/consent/grants";
import { completeAuthorization } from "@/lib/interactions/interactions";
import { ADMIN_SCOPE, MANAGEMENT_SCOPES } from "@/lib/admin/scopes";
import { runAdminChange } from "@/lib/admin/changes";
import { createClient, rotateClientSecret, updateClient } from "@/lib/clients/registry";
import { keyfob } from "@/lib/runtime";
import { startSession } from "@/lib/sessions/login-session";
import { decodeSubject } from "@/lib/tokens/sub";
import { expectError, ISSUER, registerLicense, requestChallenge, submit } from "./support/flow-a";
import { authorizeQuery, FORM, google, registerApp, token as tokenRequest } from "./support/flow-b";
import { INTERNAL_URIS } from "./support/backchannel";
import { tables } from "./support/database";
import { route } from "./support/routes";

const DELETE = route("/api/admin/v1");
const GET = route("/api/admin/v1");
const PATCH = route("/api/admin/v1");
const POST = route("/api/admin/v1");
const introspectRoute = route("/token/introspect");
const revokeRoute = route("/token/revoke");
const tokenRoute = route("/token");

type Caller = { clientId: string; secret: string };

/** A confidential client, allowed the management API unless told otherwise. */
async function adminClient(allowed = true): Promise<Caller> {
  const client = await createClient(keyfob().store, { name: "Automation" });
  const secret = await rotateClientSecret(keyfob(), client.id);
  if (allowed) await updateClient(keyfob().store, client.id, { managementApi: true, managementScopes: [ADMIN_SCOPE] });
  return { clientId: client.id, secret };
}

const basic = ({ clientId, secret }: Caller) =>
  `Basic ${Buffer.from(`${encodeURIComponent(clientId)}:${encodeURIComponent(secret)}`).toString("base64")}`;

function grant(caller: Caller, params: Record<string, string> = { grant_type: "client_credentials", scope: ADMIN_SCOPE }) {
  return tokenRoute(
    new Request(`${ISSUER}/token`, {
      method: "POST",
      headers: { ...FORM, authorization: basic(caller) },
      body: new URLSearchParams(params),
    }),
  );
}

async function adminToken(caller: Caller): Promise<string> {
  const response = await grant(caller);
  expect(response.status).toBe(200);
  return (await response.json()).access_token;
}

const handlers = { GET, POST, PATCH, DELETE };

/** Calls the API as an HTTP client would; returns the status and the parsed body. */
async function api(token: string | undefined, method: keyof typeof handlers, path: string, body?: unknown) {
  const headers: Record<string, string> = {};
  if (token !== undefined) headers.authorization = `Bearer ${token}`;
  if (body !== undefined) headers["content-type"] = "application/json";
  const response = await handlers[method](
    new Request(`${ISSUER}/api/admin/v1${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) }),
  );
  const text = await response.text();
  return {
    status: response.status,
    headers: response.headers,
    body: text && response.headers.get("content-type")?.includes("json") ? JSON.parse(text) : text,
  };
}

const enc = encodeURIComponent;

describe("client_credentials (RFC 6749 4.4)", () => {
  it("gives an allowed confidential client a short-lived, recorded keyfob:admin access token, and nothing else", async () => {
    const caller = await adminClient();
    const response = await grant(caller);
    expect(response.status).toBe(200);
    expect(response.headers.get("cache-control")).toBe("no-store");
    const body = await response.json();
    expect(Object.keys(body).sort()).toEqual(["access_token", "expires_in", "scope", "token_type"]);
    expect(body).toMatchObject({ token_type: "bearer", expires_in: 600, scope: ADMIN_SCOPE });
    expect(decodeProtectedHeader(body.access_token)).toMatchObject({ alg: "RS256", typ: "at+jwt" });
    const claims = decodeJwt(body.access_token);
    expect(claims).toMatchObject({ iss: ISSUER, aud: caller.clientId, client_id: caller.clientId, scope: ADMIN_SCOPE });
    expect(claims.exp! - claims.iat!).toBe(600);
    expect(decodeSubject(claims.sub!)).toEqual({ userId: caller.clientId, connector: "client_credentials" });
    expect(await tables(keyfob()).issuedToken.findUniqueOrThrow({ where: { jti: claims.jti! } })).toMatchObject({
      clientId: caller.clientId,
      scope: ADMIN_SCOPE,
      revokedAt: null,
    });

    // Introspection knows it (the client asks about its own token); scope omitted means the admin scope.
    const introspect = await introspectRoute(
      new Request(`${ISSUER}/token/introspect`, {
        method: "POST",
        headers: { ...FORM, authorization: basic(caller) },
        body: new URLSearchParams({ token: body.access_token }),
      }),
    );
    expect(await introspect.json()).toMatchObject({ active: true, client_id: caller.clientId, scope: ADMIN_SCOPE });
    expect((await grant(caller, { grant_type: "client_credentials" })).status).toBe(200);
    // client_secret_post works too.
    const post = await tokenRoute(
      new Request(`${ISSUER}/token`, {
        method: "POST",
        headers: FORM,
        body: new URLSearchParams({ grant_type: "client_credentials", client_id: caller.clientId, client_secret: caller.secret }),
      }),
    );
    expect(post.status).toBe(200);
  });

  it("refuses public clients, clients not allowed, wrong secrets and other scopes", async () => {
    const db = tables(keyfob());
    const publicClient = await createClient(keyfob().store, { name: "SPA" });
    const asPublic = await tokenRoute(
      new Request(`${ISSUER}/token`, {
        method: "POST",
        headers: FORM,
        body: new URLSearchParams({ grant_type: "client_credentials", client_id: publicClient.id }),
      }),
    );
    await expectError(asPublic, 400, "unauthorized_client");
    await expect(updateClient(keyfob().store, publicClient.id, { managementApi: true })).rejects.toMatchObject({ field: "managementApi" });

    const notAllowed = await adminClient(false);
    const refused = await grant(notAllowed);
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({
      error: "unauthorized_client",
      error_description: expect.stringMatching(/not allowed the management API/),
      status: 400,
    });
    await expectError(await grant({ ...(await adminClient()), secret: "wrong" }), 401, "invalid_client");
    const caller = await adminClient();
    await expectError(await grant(caller, { grant_type: "client_credentials", scope: "openid" }), 400, "invalid_scope");
    await expectError(await grant(caller, { grant_type: "client_credentials", scope: `${ADMIN_SCOPE} email` }), 400, "invalid_scope");
    await keyfob().audit.flush();
    const failure = await db.auditEvent.findFirstOrThrow({ where: { action: "token.failed", clientId: notAllowed.clientId } });
    expect(failure).toMatchObject({ outcome: "unauthorized_client", detail: expect.stringMatching(/not allowed the management API/) });
  });
});

describe("narrower scopes than keyfob:admin", () => {
  it("gives a client only the scopes an admin allowed it, and each token only what its scopes allow", async () => {
    const reader = await adminClient();
    await updateClient(keyfob().store, reader.clientId, { managementScopes: ["keyfob:read"] });
    // No scope asked: every scope allowed; asking for more than allowed is invalid_scope.
    const issued = await (await grant(reader, { grant_type: "client_credentials" })).json();
    expect(issued.scope).toBe("keyfob:read");
    await expectError(await grant(reader, { grant_type: "client_credentials", scope: ADMIN_SCOPE }), 400, "invalid_scope");
    await expectError(await grant(reader, { grant_type: "client_credentials", scope: "keyfob:read keyfob:clients" }), 400, "invalid_scope");

    const read = issued.access_token as string;
    expect((await api(read, "GET", "/audit")).status).toBe(200);
    const target = await createClient(keyfob().store, { name: "Target" });
    for (const [method, path, body] of [
      ["POST", `/clients/${enc(target.id)}/secret`, undefined],
      ["PATCH", `/clients/${enc(target.id)}`, { name: "Renamed" }],
      ["POST", "/keys/rotate", undefined],
      ["POST", "/admins", { accountId: privateKeyToAccount(generatePrivateKey()).address }],
      ["POST", "/tokens/revoke", { clientId: target.id }],
    ] as const) {
      const refused = await api(read, method, path, body);
      expect(refused, `${method} ${path}`).toMatchObject({ status: 403, body: { error: "insufficient_scope" } });
      expect(refused.headers.get("www-authenticate")).toMatch(/scope="keyfob:(clients|keys|admin|accounts)", error="insufficient_scope"/);
    }
    expect(await tables(keyfob()).client.findUniqueOrThrow({ where: { id: target.id } })).toMatchObject({
      name: "Target",
      secretHash: null,
    });
    expect(await tables(keyfob()).adminRole.count({ where: { grantedBy: `api:${reader.clientId}` } })).toBe(0);

    // A clients token changes clients, and cannot grant admins or rotate keys.
    const operator = await adminClient();
    await updateClient(keyfob().store, operator.clientId, { managementScopes: ["keyfob:clients", "keyfob:read"] });
    const clients = (await (await grant(operator, { grant_type: "client_credentials", scope: "keyfob:clients" })).json())
      .access_token as string;
    expect((await api(clients, "PATCH", `/clients/${enc(target.id)}`, { name: "Renamed" })).status).toBe(200);
    expect((await api(clients, "GET", "/clients")).status).toBe(403); // the token did not ask for keyfob:read
    expect((await api(clients, "POST", "/keys/rotate")).status).toBe(403);

    // Narrowing the client's scopes stops tokens already issued with the old ones, at once.
    const wide = (await (await grant(operator, { grant_type: "client_credentials" })).json()).access_token as string;
    expect((await api(wide, "GET", "/clients")).status).toBe(200);
    expect((await api(wide, "PATCH", `/clients/${enc(operator.clientId)}`, { managementScopes: ["keyfob:read"] })).status).toBe(200);
    expect(await api(wide, "PATCH", `/clients/${enc(target.id)}`, { name: "Again" })).toMatchObject({
      status: 403,
      body: { error: "access_denied" },
    });
    expect((await api(wide, "GET", "/clients")).status).toBe(200);
    expect((await api(wide, "PATCH", `/clients/${enc(target.id)}`, { managementScopes: ["nope"] })).status).toBe(403);
  });

  it("validates the scopes an admin allows", async () => {
    const caller = await adminClient();
    const token = await adminToken(caller);
    const target = await adminClient();
    for (const managementScopes of [["keyfob:everything"], [], "keyfob:read keyfob:nope", 7]) {
      const refused = await api(token, "PATCH", `/clients/${enc(target.clientId)}`, { managementScopes });
      expect(refused, JSON.stringify(managementScopes)).toMatchObject({
        status: 400,
        body: { error: "invalid_request", field_errors: { managementScopes: expect.any(String) } },
      });
    }
    expect(
      (await api(token, "PATCH", `/clients/${enc(target.clientId)}`, { managementScopes: ["keyfob:keys", "keyfob:keys"] })).body
        .managementScopes,
    ).toEqual(["keyfob:keys"]);
  });

  it("a keyfob:clients token cannot point a back-channel logout URI at Keyfob's machine, network or a metadata service", async () => {
    const operator = await adminClient();
    await updateClient(keyfob().store, operator.clientId, { managementScopes: ["keyfob:clients"] });
    const token = (await (await grant(operator, { grant_type: "client_credentials", scope: "keyfob:clients" })).json())
      .access_token as string;
    const target = await createClient(keyfob().store, { name: "Target" });
    // This suite's issuer is http://localhost:3000: the http ones are refused for their host.
    for (const backchannelLogoutUri of INTERNAL_URIS) {
      expect(await api(token, "PATCH", `/clients/${enc(target.id)}`, { backchannelLogoutUri }), backchannelLogoutUri).toMatchObject({
        status: 400,
        body: { error: "invalid_request", field_errors: { backchannelLogoutUri: expect.stringMatching(/must be on a public host/) } },
      });
    }
    expect(await tables(keyfob()).client.findUniqueOrThrow({ where: { id: target.id } })).toMatchObject({ backchannelLogoutUri: null });
    const accepted = await api(token, "PATCH", `/clients/${enc(target.id)}`, { backchannelLogoutUri: "https://rp.example.com/logout" });
    expect(accepted).toMatchObject({ status: 200, body: { backchannelLogoutUri: "https://rp.example.com/logout" } });
  });
});

describe("no privilege escalation through narrower scopes (security review, third round)", () => {
  /** A client allowed only keyfob:clients (and read), and its token. */
  async function clientsOperator() {
    const operator = await adminClient();
    await updateClient(keyfob().store, operator.clientId, { managementScopes: ["keyfob:clients", "keyfob:read"] });
    const token = (await (await grant(operator, { grant_type: "client_credentials" })).json()).access_token as string;
    return { operator, token };
  }
  const forbidden = { status: 403, body: { error: "insufficient_scope", status: 403 } };
  const reachesAdmins = async (caller: Caller) => {
    const response = await grant(caller, { grant_type: "client_credentials", scope: ADMIN_SCOPE });
    if (response.status !== 200) return false;
    const token = (await response.json()).access_token as string;
    return (await api(token, "POST", "/admins", { accountId: privateKeyToAccount(generatePrivateKey()).address })).status === 201;
  };

  it("a keyfob:clients client cannot give itself keyfob:admin", async () => {
    const { operator, token } = await clientsOperator();
    const raised = await api(token, "PATCH", `/clients/${enc(operator.clientId)}`, { managementScopes: [ADMIN_SCOPE] });
    expect(raised).toMatchObject(forbidden);
    expect(raised.headers.get("www-authenticate")).toMatch(/scope="keyfob:admin", error="insufficient_scope"/);
    expect((await tables(keyfob()).client.findUniqueOrThrow({ where: { id: operator.clientId } })).managementScopes).toEqual([
      "keyfob:clients",
      "keyfob:read",
    ]);
    expect(await reachesAdmins(operator)).toBe(false);
    await keyfob().audit.flush();
    expect(
      await tables(keyfob()).auditEvent.findFirst({
        where: { action: "client.updated", clientId: operator.clientId, actor: `api:${operator.clientId}` },
        orderBy: { id: "desc" },
      }),
    ).toMatchObject({ outcome: "forbidden", detail: expect.stringMatching(/needs the keyfob:admin scope/) });
  });

  it("a keyfob:clients client cannot allow the management API to a client of its own, whose scopes are none by default", async () => {
    const { token } = await clientsOperator();
    const created = await api(token, "POST", "/clients", { name: "Sleeper" });
    expect(created.status).toBe(201);
    expect(created.body.managementScopes).toEqual([]);
    const secret = await api(token, "POST", `/clients/${enc(created.body.id)}/secret`);
    expect(secret.status).toBe(201);
    expect(await api(token, "PATCH", `/clients/${enc(created.body.id)}`, { managementApi: true })).toMatchObject(forbidden);
    expect(await tables(keyfob()).client.findUniqueOrThrow({ where: { id: created.body.id } })).toMatchObject({
      managementApi: false,
      managementScopes: [],
    });
    expect(await reachesAdmins({ clientId: created.body.id, secret: secret.body.secret })).toBe(false);
    // An admin allowing the API without choosing scopes gives none: the client gets no token.
    await updateClient(keyfob().store, created.body.id, { managementApi: true });
    await expectError(
      await grant({ clientId: created.body.id, secret: secret.body.secret }, { grant_type: "client_credentials" }),
      400,
      "unauthorized_client",
    );
  });

  it("a keyfob:clients client cannot take over a management client by replacing its secret", async () => {
    const { token } = await clientsOperator();
    const automation = await adminClient(); // holds keyfob:admin
    for (const [method, path] of [
      ["POST", `/clients/${enc(automation.clientId)}/secret`],
      ["DELETE", `/clients/${enc(automation.clientId)}/secret/previous`],
    ] as const) {
      expect(await api(token, method, path, method === "POST" ? { overlapSeconds: 60 } : undefined), `${method} ${path}`).toMatchObject(
        forbidden,
      );
    }
    // Its secret is unchanged: the rightful holder still gets tokens.
    expect((await grant(automation)).status).toBe(200);
    // Narrowing or withdrawing grants nothing, so it stays open to keyfob:clients, as do other clients' secrets.
    const plain = await createClient(keyfob().store, { name: "Plain" });
    expect((await api(token, "POST", `/clients/${enc(plain.id)}/secret`)).status).toBe(201);
    expect((await api(token, "PATCH", `/clients/${enc(automation.clientId)}`, { managementScopes: ["keyfob:read"] })).status).toBe(200);
  });

  it("a keyfob:accounts client cannot block, delete or sign out an admin's account, nor revoke what it holds", async () => {
    const operator = await adminClient();
    await updateClient(keyfob().store, operator.clientId, { managementScopes: ["keyfob:accounts", "keyfob:read"] });
    const token = (await (await grant(operator, { grant_type: "client_credentials" })).json()).access_token as string;
    const wallet = privateKeyToAccount(generatePrivateKey());
    const accountId = await resolveAccount(keyfob(), { provider: "web3", subject: wallet.address, emailVerified: false });
    await startSession(keyfob(), { accountId, identity: { provider: "web3", subject: wallet.address, emailVerified: false } });
    await runAdminChange(keyfob(), { accountId: "x", label: "x", scopes: ALL_SCOPES }, "admin.grant", { accountId });
    for (const [method, path, body] of [
      ["POST", `/accounts/${accountId}/block`, undefined],
      ["DELETE", `/accounts/${accountId}`, undefined],
      ["DELETE", `/accounts/${accountId}/sessions`, undefined],
      ["POST", "/tokens/revoke", { accountId }],
      ["POST", "/refresh-grants/revoke", { accountId }],
    ] as const) {
      expect(await api(token, method, path, body), `${method} ${path}`).toMatchObject(forbidden);
    }
    expect(await tables(keyfob()).account.findUniqueOrThrow({ where: { id: accountId } })).toMatchObject({ blockedAt: null });
    expect(await tables(keyfob()).loginSession.count({ where: { accountId, revokedAt: null } })).toBe(1);
    // Anyone else's account is within keyfob:accounts.
    const other = privateKeyToAccount(generatePrivateKey());
    const plainAccount = await resolveAccount(keyfob(), { provider: "web3", subject: other.address, emailVerified: false });
    expect((await api(token, "POST", `/accounts/${plainAccount}/block`)).status).toBe(200);
  });
});

describe("the management API", () => {
  let caller: Caller;
  let token: string;
  beforeAll(async () => {
    caller = await adminClient();
    token = await adminToken(caller);
  });

  it("serves its OpenAPI document without a token", async () => {
    const { status, body } = await api(undefined, "GET", "/openapi.json");
    expect(status).toBe(200);
    expect(body.openapi).toBe("3.1.0");
    expect(body.servers[0].url).toBe(`${ISSUER}/api/admin/v1`);
    expect(body.components.securitySchemes.adminToken.flows.clientCredentials).toEqual({
      tokenUrl: `${ISSUER}/token`,
      scopes: MANAGEMENT_SCOPES,
    });
    expect(body.paths["/audit"].get.security).toEqual([{ adminToken: ["keyfob:read"] }]);
    expect(body.paths["/admins"].post.security).toEqual([{ adminToken: ["keyfob:admin"] }]);
    for (const path of [
      "/clients",
      "/clients/{clientId}",
      "/clients/{clientId}/signers/{address}",
      "/keys/{kid}/revoke",
      "/accounts/{accountId}/block",
      "/accounts/{accountId}/sessions/{sessionId}",
      "/tokens/revoke",
      "/refresh-grants",
      "/audit",
      "/admins",
    ]) {
      expect(body.paths, path).toHaveProperty([path]);
    }
    expect(body.paths["/clients/{clientId}"].patch.requestBody.content["application/json"].schema.properties).toMatchObject({
      requirePkce: { type: "boolean" },
      requirePushedAuthorizationRequests: { type: "boolean" },
      managementApi: { type: "boolean" },
      name: { type: "string", maxLength: 200 },
    });
    expect(body.paths["/clients"].post.requestBody.content["application/json"].schema.required).toEqual(["name"]);
    expect(body.paths["/clients/{clientId}"].delete.responses).toHaveProperty(["204"]);
  });

  it("manages a client end to end: create, settings, redirect URIs, post-logout URIs, origins, signers, secret, delete", async () => {
    const created = await api(token, "POST", "/clients", { name: "From the API", logoUrl: "https://api.example.com/logo.png" });
    expect(created.status).toBe(201);
    const id: string = created.body.id;
    expect(created.body).toMatchObject({
      name: "From the API",
      enabled: true,
      confidential: false,
      managementApi: false,
      redirectUris: [],
    });
    expect((await api(token, "GET", `/clients?search=${enc("From the API")}`)).body.items.map((c: { id: string }) => c.id)).toContain(id);

    const patched = await api(token, "PATCH", `/clients/${enc(id)}`, {
      requirePkce: true,
      refreshTokensAllowed: true,
      logoUrl: null,
      enabled: false,
      requirePushedAuthorizationRequests: true,
    });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ requirePkce: true, refreshTokensAllowed: true, logoUrl: null, enabled: false });
    expect(patched.body.requirePushedAuthorizationRequests).toBe(true);
    // The dashboard's validation: field errors, 400, nothing changed, and the refusal audited with its reason.
    const bad = await api(token, "PATCH", `/clients/${enc(id)}`, { logoUrl: "http://insecure.example.com/logo.png", name: "" });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ error: "invalid_request", status: 400, field_errors: { name: "required" } });
    expect(bad.body.message).toBe(bad.body.error_description);
    const notHttps = await api(token, "PATCH", `/clients/${enc(id)}`, { logoUrl: "http://insecure.example.com/logo.png" });
    expect(notHttps.body).toMatchObject({ field_errors: { logoUrl: "must be an https URL" } });
    // The public client cannot be given the management API.
    expect((await api(token, "PATCH", `/clients/${enc(id)}`, { managementApi: true })).body).toMatchObject({
      status: 400,
      field_errors: { managementApi: expect.stringMatching(/confidential/) },
    });
    expect((await api(token, "PATCH", `/clients/${enc(id)}`, { enabled: true })).body.enabled).toBe(true);
    // Back-channel logout: its URI (https, or http on localhost) and whether the client needs sid.
    const backchannel = await api(token, "PATCH", `/clients/${enc(id)}`, {
      backchannelLogoutUri: "https://api.example.com/backchannel-logout",
      backchannelLogoutSessionRequired: true,
    });
    expect(backchannel.body).toMatchObject({
      backchannelLogoutUri: "https://api.example.com/backchannel-logout",
      backchannelLogoutSessionRequired: true,
    });
    expect(
      (await api(token, "PATCH", `/clients/${enc(id)}`, { backchannelLogoutUri: "http://api.example.com/logout" })).body,
    ).toMatchObject({
      status: 400,
      field_errors: { backchannelLogoutUri: expect.stringMatching(/http is allowed only on localhost/) },
    });
    expect((await api(token, "PATCH", `/clients/${enc(id)}`, { backchannelLogoutUri: null })).body.backchannelLogoutUri).toBeNull();
    // The device authorization grant (RFC 8628) is allowed per client, off until an admin allows it.
    expect(created.body.deviceFlow).toBe(false);
    expect((await api(token, "PATCH", `/clients/${enc(id)}`, { deviceFlow: true })).body.deviceFlow).toBe(true);
    // So is offline_access on its device grants.
    expect(created.body.deviceFlowOfflineAccess).toBe(false);
    expect((await api(token, "PATCH", `/clients/${enc(id)}`, { deviceFlowOfflineAccess: true })).body.deviceFlowOfflineAccess).toBe(true);

    for (const [path, field, value] of [
      ["redirect-uris", "uri", "https://api.example.com/cb"],
      ["post-logout-redirect-uris", "uri", "https://api.example.com/bye"],
      ["allowed-origins", "origin", "https://spa.example.com"],
    ]) {
      const added = await api(token, "POST", `/clients/${enc(id)}/${path}`, { [field]: value });
      expect(added, path).toMatchObject({ status: 201, body: { items: [value] } });
      expect((await api(token, "GET", `/clients/${enc(id)}/${path}`)).body.items).toEqual([value]);
      expect((await api(token, "DELETE", `/clients/${enc(id)}/${path}?${field}=${enc(value)}`)).status).toBe(204);
      expect((await api(token, "DELETE", `/clients/${enc(id)}/${path}?${field}=${enc(value)}`)).body).toMatchObject({
        status: 400,
        field_errors: { [field]: expect.any(String) },
      });
    }
    expect(
      (await api(token, "POST", `/clients/${enc(id)}/redirect-uris`, { uri: "http://api.example.com/cb" })).body.field_errors.uri,
    ).toMatch(/https/);

    // Signers are a license's: a client with a generated id is refused one, as the dashboard and CLI refuse it.
    const signer = privateKeyToAccount(generatePrivateKey()).address;
    const refused = await api(token, "POST", `/clients/${enc(id)}/signers`, { address: signer });
    expect(refused).toMatchObject({
      status: 400,
      body: { error: "invalid_request", status: 400, field_errors: { clientId: expect.stringMatching(/license address/) } },
    });
    expect((await api(token, "GET", `/clients/${enc(id)}/signers`)).body.items).toEqual([]);
    const license = privateKeyToAccount(generatePrivateKey()).address;
    expect((await api(token, "POST", "/clients", { id: license, name: "A license" })).status).toBe(201);
    const added = await api(token, "POST", `/clients/${enc(license)}/signers`, {
      address: signer.toLowerCase(),
      expiresAt: "2099-01-01T00:00:00Z",
    });
    expect(added).toMatchObject({ status: 201, body: { signer: { address: signer, expiresAt: "2099-01-01T00:00:00.000Z" } } });
    expect((await api(token, "DELETE", `/clients/${enc(license)}/signers/${signer}`)).status).toBe(204);
    expect((await api(token, "GET", `/clients/${enc(license)}/signers`)).body.items[0]).toMatchObject({
      address: signer,
      revokedAt: expect.any(String),
    });
    expect((await api(token, "DELETE", `/clients/${enc(license)}`)).status).toBe(204);

    const secret = await api(token, "POST", `/clients/${enc(id)}/secret`);
    expect(secret).toMatchObject({ status: 201, body: { clientId: id, secret: expect.stringMatching(/^[\w-]{43}$/) } });
    expect((await api(token, "GET", `/clients/${enc(id)}`)).body).toMatchObject({ confidential: true, secretOverlapEndsAt: null });
    // A rotation with an overlap, ended early.
    const overlapping = await api(token, "POST", `/clients/${enc(id)}/secret`, { overlapSeconds: 3600 });
    expect(overlapping).toMatchObject({
      status: 201,
      body: { secret: expect.stringMatching(/^[\w-]{43}$/), previousSecretExpiresAt: expect.any(String) },
    });
    expect((await api(token, "GET", `/clients/${enc(id)}`)).body.secretOverlapEndsAt).toBe(overlapping.body.previousSecretExpiresAt);
    expect((await api(token, "POST", `/clients/${enc(id)}/secret`, { overlapSeconds: "soon" })).body).toMatchObject({
      status: 400,
      field_errors: { overlapSeconds: expect.any(String) },
    });
    expect((await api(token, "DELETE", `/clients/${enc(id)}/secret/previous`)).status).toBe(204);
    expect((await api(token, "DELETE", `/clients/${enc(id)}/secret/previous`)).body).toMatchObject({ status: 400 });

    // Audited like the dashboard's changes, under the API client's name, with before and after.
    const events = await tables(keyfob()).auditEvent.findMany({ where: { clientId: id }, orderBy: { id: "asc" } });
    expect(new Set(events.map((e) => e.actor))).toEqual(new Set([`api:${caller.clientId}`]));
    expect(events.find((e) => e.action === "client.updated" && e.outcome === "success")!.detail).toContain("requirePkce: false -> true");
    expect(events.some((e) => e.action === "client.updated" && e.detail === "deviceFlowOfflineAccess: false -> true")).toBe(true);
    expect(events.find((e) => e.action === "client.updated" && e.outcome === "rejected")!.detail).toBe("invalid input: name: required");
    expect(events.find((e) => e.action === "allowed_origin.added")!.detail).toBe(
      'https://spa.example.com; allowedOrigins: [] -> ["https://spa.example.com"]',
    );
    expect(events.find((e) => e.action === "client.secret_rotated")!.detail).toBe("confidential: false -> true");

    expect((await api(token, "DELETE", `/clients/${enc(id)}`)).status).toBe(204);
    expect(await api(token, "GET", `/clients/${enc(id)}`)).toMatchObject({ status: 404, body: { error: "not_found", status: 404 } });
    expect((await api(token, "DELETE", `/clients/${enc(id)}`)).status).toBe(404);
    expect((await api(token, "GET", "/no-such-thing")).status).toBe(404);
    expect((await api(token, "PATCH", "/keys")).status).toBe(405);
  });

  it("reads and rotates signing keys, and refuses an unknown kid", async () => {
    const keys = await api(token, "GET", "/keys");
    expect(keys.body.items.some((key: { status: string }) => key.status === "current")).toBe(true);
    expect((await api(token, "POST", "/keys/rotate")).status).toBe(200);
    expect(await api(token, "POST", `/keys/${"0".repeat(40)}/revoke`)).toMatchObject({
      status: 400,
      body: { field_errors: { kid: expect.stringMatching(/no signing key/) } },
    });
  });

  it("lists an account's consent grants and revokes one, ending the client's refresh tokens for the account", async () => {
    const k = keyfob();
    const app = await registerApp({ settings: { requireConsent: true, refreshTokensAllowed: true } });
    const identity = google();
    const accountId = await resolveAccount(k, identity);
    await recordConsent(k, accountId, app.clientId, ["openid", "offline_access"]);
    const start = await startAuthorization(k, authorizeQuery(app, { scope: "openid offline_access" }));
    if (start.kind !== "login") throw new Error("expected the login page");
    const code = new URL((await completeAuthorization(k, start.interactionId, { identity })).location).searchParams.get("code")!;
    const tokens = await (await tokenRequest(app, { code })).json();

    expect((await api(token, "GET", `/accounts/${accountId}/consents`)).body.items).toMatchObject([
      { clientId: app.clientId, clientName: "Fleet dashboard", scope: ["offline_access", "openid"] },
    ]);
    expect(await api(token, "DELETE", `/accounts/${accountId}/consents/${enc(app.clientId)}`)).toMatchObject({
      status: 200,
      body: { revoked: 1 },
    });
    expect((await api(token, "GET", `/accounts/${accountId}`)).body.consents).toEqual([]);
    expect((await tokenRequest(app, { grant_type: "refresh_token", refresh_token: tokens.refresh_token })).status).toBe(400);
    expect(await api(token, "DELETE", `/accounts/${accountId}/consents/${enc(app.clientId)}`)).toMatchObject({
      status: 400,
      body: { field_errors: { clientId: expect.stringMatching(/not granted/) } },
    });
  });

  it("finds accounts by email and wallet, lists and revokes sessions, blocks, unblocks and deletes them; lists and revokes tokens", async () => {
    const k = keyfob();
    const identity = google();
    const accountId = await resolveAccount(k, identity);
    const sessions = await Promise.all([startSession(k, { accountId, identity }), startSession(k, { accountId, identity })]);

    expect(
      (await api(token, "GET", `/accounts?search=${enc(identity.email!.toUpperCase())}`)).body.items.map((a: { id: string }) => a.id),
    ).toEqual([accountId]);
    const shown = await api(token, "GET", `/accounts/${enc(identity.email!)}`);
    expect(shown.body).toMatchObject({
      id: accountId,
      blockedAt: null,
      identities: [{ provider: "google", email: identity.email }],
      holdings: { accessTokens: 0, refreshGrants: 0 },
    });
    expect(shown.body.sessions).toHaveLength(2);
    expect((await api(token, "GET", `/accounts/${accountId}/sessions`)).body.items.map((s: { id: string }) => s.id).sort()).toEqual(
      sessions.map((s) => s.session.id).sort(),
    );
    expect((await api(token, "DELETE", `/accounts/${accountId}/sessions/${sessions[0].session.id}`)).status).toBe(204);
    expect((await api(token, "DELETE", `/accounts/${accountId}/sessions/${sessions[0].session.id}`)).body.field_errors.sessionId).toMatch(
      /no live session/,
    );
    expect((await api(token, "GET", `/accounts/${accountId}/sessions`)).body.items).toHaveLength(1);
    expect((await api(token, "DELETE", `/accounts/${accountId}/sessions`)).body).toEqual({ revoked: 1 });

    // A license with a Flow A token of the wallet; the account of that wallet is found by its address in any case.
    const license = await registerLicense();
    const challenge = await requestChallenge(license);
    const issued = await (await submit(license, challenge.state, await license.owner.signMessage({ message: challenge.challenge }))).json();
    const tokens = await api(token, "GET", `/tokens?client=${license.clientId.toLowerCase()}`);
    expect(tokens.body.items.map((t: { userId: string }) => t.userId)).toEqual([license.clientId]);
    expect((await api(token, "POST", "/tokens/revoke", { jti: decodeJwt(issued.access_token).jti })).body).toEqual({ revoked: 1 });
    expect((await api(token, "GET", `/tokens?client=${license.clientId}`)).body.total).toBe(0);
    expect((await api(token, "POST", "/tokens/revoke", {})).body.field_errors.target).toMatch(/name a token/);
    expect((await api(token, "GET", `/refresh-grants?account=${accountId}`)).body).toMatchObject({ items: [], total: 0 });
    expect((await api(token, "POST", "/refresh-grants/revoke", { accountId })).body).toEqual({ revoked: 0 });

    const blocked = await api(token, "POST", `/accounts/${accountId}/block`);
    expect(blocked).toMatchObject({ status: 200, body: { revokedTokens: 0, revokedSessions: 0 } });
    expect((await api(token, "GET", `/accounts/${accountId}`)).body.blockedAt).toEqual(expect.any(String));
    expect((await api(token, "POST", `/accounts/${accountId}/unblock`)).body.blockedAt).toBeNull();
    expect((await api(token, "DELETE", `/accounts/${accountId}`)).body).toMatchObject({ revokedTokens: 0 });
    expect((await api(token, "GET", `/accounts/${accountId}`)).status).toBe(404);
    expect((await api(token, "POST", `/accounts/${accountId}/block`)).status).toBe(404);
    const events = await tables(k).auditEvent.findMany({ where: { accountId, actor: `api:${caller.clientId}` }, orderBy: { id: "asc" } });
    expect(events.map((e) => e.action)).toEqual([
      "session.revoked",
      "session.revoked",
      "session.revoked",
      "refresh_token.revoked",
      "account.blocked",
      "account.unblocked",
      "account.deleted",
    ]);
    expect(events[1]).toMatchObject({
      outcome: "rejected",
      detail: `${sessions[0].session.id}; sessionId: no live session of this account has this id`,
    });
  });

  it("grants and revokes admin roles, and reads the audit log and its CSV", async () => {
    const newcomer = privateKeyToAccount(generatePrivateKey()).address;
    expect((await api(token, "POST", "/admins", { accountId: newcomer.toLowerCase() })).status).toBe(201);
    expect((await api(token, "GET", "/admins")).body.items.map((a: { accountId: string }) => a.accountId)).toContain(newcomer);
    expect((await api(token, "DELETE", `/admins/${newcomer}`)).status).toBe(204);
    expect((await api(token, "POST", "/admins", { accountId: "nope" })).body.field_errors.accountId).toMatch(/20-byte/);

    const audit = await api(token, "GET", `/audit?action=admin.&account=${newcomer.toLowerCase()}`);
    expect(audit.body.items.map((e: { action: string; actor: string }) => [e.action, e.actor])).toEqual([
      ["admin.revoked", `api:${caller.clientId}`],
      ["admin.granted", `api:${caller.clientId}`],
    ]);
    expect(audit.body.items[1].detail).toBe("adminRole: false -> true");
    expect((await api(token, "GET", "/audit?from=2026-13-01")).body).toMatchObject({
      status: 400,
      field_errors: { from: expect.any(String) },
    });
    const csv = await api(token, "GET", `/audit.csv?account=${newcomer}`);
    expect(csv.status).toBe(200);
    expect(csv.body.split("\r\n")[0]).toBe("at,actor,action,clientId,accountId,ip,outcome,detail");
    expect(csv.body).toMatch(/"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z","api:/); // UTC
  });

  it("validates exactly as the dashboard does", async () => {
    const viaApi = await api(token, "POST", "/clients", { name: "", logoUrl: "x".repeat(2001) });
    const viaDashboard = await runAdminChange(keyfob(), { accountId: "x", label: "x", scopes: ALL_SCOPES }, "client.create", {
      name: "",
      logoUrl: "x".repeat(2001),
    });
    expect(viaDashboard.ok).toBe(false);
    expect(viaApi.body.field_errors).toEqual(!viaDashboard.ok && viaDashboard.fieldErrors);
    expect((await api(token, "POST", "/clients", { name: 7 })).body.field_errors.name).toEqual(expect.any(String));
    const notJson = await POST(
      new Request(`${ISSUER}/api/admin/v1/clients`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "text/plain" },
        body: "name=x",
      }),
    );
    expect(notJson.status).toBe(415);
    const broken = await POST(
      new Request(`${ISSUER}/api/admin/v1/clients`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: "{",
      }),
    );
    expect(await broken.json()).toMatchObject({ error: "invalid_request", status: 400 });
  });
});

describe("who may call the management API", () => {
  it("answers 401 with WWW-Authenticate without a valid token, and 403 without the scope or the client's permission", async () => {
    const none = await api(undefined, "GET", "/clients");
    expect(none.status).toBe(401);
    expect(none.headers.get("www-authenticate")).toBe(`Bearer realm="keyfob", scope="keyfob:read"`);
    expect(none.body).toMatchObject({
      error: "invalid_token",
      status: 401,
      message: expect.any(String),
      error_description: expect.any(String),
    });
    const garbage = await api("not-a-token", "GET", "/clients");
    expect(garbage.status).toBe(401);
    expect(garbage.headers.get("www-authenticate")).toMatch(
      /^Bearer realm="keyfob", scope="keyfob:read", error="invalid_token", error_description="/,
    );
    expect((await api("", "GET", "/clients")).status).toBe(401);

    // A Flow A token of a license: valid, but no admin scope.
    const license = await registerLicense();
    const challenge = await requestChallenge(license);
    const flowA = await (await submit(license, challenge.state, await license.owner.signMessage({ message: challenge.challenge }))).json();
    const scopeless = await api(flowA.access_token, "GET", "/clients");
    expect(scopeless).toMatchObject({ status: 403, body: { error: "insufficient_scope", status: 403 } });
    expect(scopeless.headers.get("www-authenticate")).toMatch(/error="insufficient_scope"/);

    // A client whose permission is withdrawn, or that is disabled: its tokens stop working at once.
    const caller = await adminClient();
    const token = await adminToken(caller);
    expect((await api(token, "GET", "/keys")).status).toBe(200);
    await updateClient(keyfob().store, caller.clientId, { managementApi: false });
    expect(await api(token, "GET", "/keys")).toMatchObject({ status: 403, body: { error: "access_denied" } });
    await updateClient(keyfob().store, caller.clientId, { managementApi: true, enabled: false });
    expect((await api(token, "GET", "/keys")).status).toBe(403);
    await updateClient(keyfob().store, caller.clientId, { enabled: true });
    expect((await api(token, "GET", "/keys")).status).toBe(200);
    await keyfob().audit.flush();
    expect(
      await tables(keyfob()).auditEvent.findFirst({
        where: { action: "admin_api.refused", clientId: caller.clientId },
        orderBy: { id: "desc" },
      }),
    ).toMatchObject({
      outcome: "access_denied",
      detail: "GET /api/admin/v1/keys: the token's client is no longer allowed the management API",
    });

    // Revoked (RFC 7009): 401 from the next request.
    const revoked = await revokeRoute(
      new Request(`${ISSUER}/token/revoke`, {
        method: "POST",
        headers: { ...FORM, authorization: basic(caller) },
        body: new URLSearchParams({ token }),
      }),
    );
    expect(revoked.status).toBe(200);
    const after = await api(token, "GET", "/keys");
    expect(after).toMatchObject({ status: 401, body: { error: "invalid_token" } });
    expect(after.headers.get("www-authenticate")).toMatch(/revoked/);
  });
});

describe("vehicle tokens (RFC 8693 token exchange)", () => {
  it("allows a client the exchange only through keyfob:clients: off by default, round-trips, audited, in the OpenAPI document", async () => {
    const caller = await adminClient();
    await updateClient(keyfob().store, caller.clientId, { managementScopes: ["keyfob:clients", "keyfob:read", "keyfob:accounts"] });
    const clients = (await (await grant(caller, { grant_type: "client_credentials", scope: "keyfob:clients keyfob:read" })).json())
      .access_token as string;
    const created = await api(clients, "POST", "/clients", { name: "Fleet app" });
    const id: string = created.body.id;
    expect(created.body.tokenExchange).toBe(false);
    expect((await api(clients, "PATCH", `/clients/${enc(id)}`, { tokenExchange: true })).body.tokenExchange).toBe(true);
    expect((await api(clients, "GET", `/clients/${enc(id)}`)).body.tokenExchange).toBe(true);
    expect((await tables(keyfob()).client.findUniqueOrThrow({ where: { id } })).tokenExchange).toBe(true);
    expect((await api(clients, "PATCH", `/clients/${enc(id)}`, { tokenExchange: "maybe" })).body).toMatchObject({
      status: 400,
      field_errors: { tokenExchange: "must be true or false" },
    });

    // A token without keyfob:clients cannot change it.
    const accounts = (await (await grant(caller, { grant_type: "client_credentials", scope: "keyfob:accounts keyfob:read" })).json())
      .access_token as string;
    expect(await api(accounts, "PATCH", `/clients/${enc(id)}`, { tokenExchange: false })).toMatchObject({
      status: 403,
      body: { error: "insufficient_scope" },
    });
    expect((await tables(keyfob()).client.findUniqueOrThrow({ where: { id } })).tokenExchange).toBe(true);

    const events = await tables(keyfob()).auditEvent.findMany({
      where: { clientId: id, action: "client.updated" },
      orderBy: { id: "asc" },
    });
    expect(events.map((e) => [e.actor, e.outcome, e.detail])).toEqual([
      [`api:${caller.clientId}`, "success", "tokenExchange: false -> true"],
      [`api:${caller.clientId}`, "rejected", "invalid input: tokenExchange: must be true or false"],
    ]);

    const { body } = await api(undefined, "GET", "/openapi.json");
    expect(body.paths["/clients/{clientId}"].patch.requestBody.content["application/json"].schema.properties.tokenExchange).toMatchObject({
      type: "boolean",
    });
    expect(body.paths["/clients/{clientId}"].patch.security).toEqual([{ adminToken: ["keyfob:clients"] }]);
    expect(
      body.paths["/clients/{clientId}"].get.responses["200"].content["application/json"].schema.properties.tokenExchange,
    ).toMatchObject({
      type: "boolean",
    });
  });

  it("lists a vehicle token with its vehicle and its privileges by name", async () => {
    const caller = await adminClient();
    const token = await adminToken(caller);
    const app = await createClient(keyfob().store, { name: "Fleet app" });
    // Arranged as a row: the real issuance (POST /token, token exchange) is tested with the protocol side.
    const vehicle = "did:erc721:137:0xbA5738a18d83D41847dfFbDC6101d37C69c9B0cF:1234";
    const expiresAt = new Date(Date.now() + 600_000);
    const holder = privateKeyToAccount(generatePrivateKey()).address;
    await tables(keyfob()).issuedToken.createMany({
      data: [
        { jti: `at-${app.id}`, clientId: app.id, userId: holder, connector: "web3", scope: "openid", expiresAt },
        {
          jti: `vt-${app.id}`,
          clientId: app.id,
          userId: holder,
          connector: "web3",
          scope: "",
          vehicle,
          vehiclePrivileges: [1, 3, 9],
          subjectJti: `at-${app.id}`,
          expiresAt,
        },
      ],
    });
    const { body } = await api(token, "GET", `/tokens?client=${enc(app.id)}`);
    const byJti = Object.fromEntries(body.items.map((t: { jti: string }) => [t.jti, t]));
    expect(byJti[`vt-${app.id}`]).toMatchObject({
      vehicle,
      privileges: [
        { id: 1, name: "GetNonLocationHistory" },
        { id: 3, name: "GetCurrentLocation" },
        { id: 9, name: "privilege 9" },
      ],
    });
    expect(byJti[`at-${app.id}`]).toMatchObject({ vehicle: null, privileges: [] });
    // kind=vehicle: the client's vehicle tokens only.
    const vehicles = (await api(token, "GET", `/tokens?client=${enc(app.id)}&kind=vehicle`)).body;
    expect([vehicles.total, vehicles.items.map((t: { jti: string }) => t.jti)]).toEqual([1, [`vt-${app.id}`]]);
    expect((await api(token, "GET", `/tokens?client=${enc(app.id)}&kind=cars`)).body).toMatchObject({
      status: 400,
      field_errors: { kind: "Must be vehicle, or empty for every token." },
    });

    const list = (await api(undefined, "GET", "/openapi.json")).body.paths["/tokens"].get;
    expect(Object.keys(list.responses["200"].content["application/json"].schema.properties.items.items.properties)).toEqual(
      expect.arrayContaining(["vehicle", "privileges"]),
    );
    expect(list.parameters.map((p: { name: string }) => p.name)).toContain("kind");
  });
});

describe("resource indicators (RFC 8707)", () => {
  it("sets and shows a client's resources; a token asked for a resource is no management API token", async () => {
    const caller = await adminClient();
    const resources = ["https://api.fleet.example.com", "https://telemetry.fleet.example.com/v2"];
    // Registered before the caller's first token: the client cache then holds it with the resource,
    // and no change notification has to arrive before the grant below.
    await updateClient(keyfob().store, caller.clientId, { resources: [resources[0]] });
    const token = await adminToken(caller);
    const target = await createClient(keyfob().store, { name: "Fleet app" });
    expect(await api(token, "PATCH", `/clients/${enc(target.id)}`, { resources })).toMatchObject({ status: 200, body: { resources } });
    expect((await api(token, "GET", `/clients/${enc(target.id)}`)).body.resources).toEqual(resources);
    expect(await api(token, "PATCH", `/clients/${enc(target.id)}`, { resources: ["https://api.fleet.example.com#x"] })).toMatchObject({
      status: 400,
      body: { field_errors: { resources: expect.stringContaining("fragment") } },
    });

    // The management client asks for a token for one of its resources: that server's, refused here.
    const response = await grant(caller, { grant_type: "client_credentials", scope: ADMIN_SCOPE, resource: resources[0] });
    const forResource = (await response.json()).access_token as string;
    expect(decodeJwt(forResource).aud).toBe(resources[0]);
    const refused = await api(forResource, "GET", "/clients");
    expect(refused).toMatchObject({ status: 401, body: { error: "invalid_token" } });
    expect(refused.headers.get("www-authenticate")).toContain('error="invalid_token"');
    expect((await api(token, "GET", "/clients")).status).toBe(200);
  });
});
