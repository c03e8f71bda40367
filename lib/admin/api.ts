import { z } from "zod";
import type { HttpRequest } from "../http/request";
import type { Answer } from "../http/respond";
import type { Resource } from "../http/routes";
import type { Keyfob } from "../keyfob";
import { errorDescription, OAuthError } from "../oauth/errors";
import { hasControlCharacter, readBodyText } from "../oauth/params";
import { dpopNonce } from "../oauth/dpop";
import { presentedToken, verifyPresentedToken, type ActiveToken } from "../tokens/verify";
import type { Admin } from "./access";
import { parseAuditQuery } from "./audit-filter";
import { parseHolderQuery, parseSearch, parseTokenQuery, type FilterErrors } from "./filters";
import { runAdminChange, type AdminChangeName } from "./changes";
import { RESPONSES, type ResponseName } from "./api-schemas";
import * as ops from "./operations";
import { ADMIN_SCOPE, covers, isManagementScope, type ManagementScope } from "./scopes";

/**
 * The management API (`/api/admin/v1`): every dashboard operation as JSON, for an access token
 * that Keyfob issued to a client an admin allowed (client_credentials, scope `keyfob:admin`, see
 * lib/actions/client-credentials.ts). Changes go through runAdminChange, so their validation and
 * audit are the dashboard's; the audit log names the client as `api:<client_id>`.
 *
 * Errors use Keyfob's documented shape, `{error, error_description, status, message}` (plus
 * `field_errors` for invalid input): 401 with WWW-Authenticate for a missing, invalid, expired or
 * revoked token; 403 for a token without the admin scope, or whose client is no longer allowed
 * (disabled, setting withdrawn, or no longer confidential); 404 for an unknown resource; 400 for
 * invalid input; 415/413 for a body that is not JSON or too large. The OpenAPI document
 * (lib/admin/openapi.ts) describes the same route table.
 */

export const API_BASE = "/api/admin/v1";

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    description: string,
    readonly extra: { headers?: Record<string, string>; fieldErrors?: Record<string, string> } = {},
  ) {
    super(errorDescription(description));
  }
}

const notFound = (what: string) => new ApiError(404, "not_found", `no ${what}`);

export function apiJson(body: unknown, status = 200, headers: Record<string, string> = {}): Answer {
  if (status === 204) return { status, headers: { "Cache-Control": "no-store", ...headers } };
  return { status, headers: { "Content-Type": "application/json", "Cache-Control": "no-store", ...headers }, body: JSON.stringify(body) };
}

export function apiError(error: ApiError): Answer {
  return apiJson(
    {
      error: error.code,
      error_description: error.message,
      status: error.status,
      message: error.message,
      ...(error.extra.fieldErrors && { field_errors: error.extra.fieldErrors }),
    },
    error.status,
    error.extra.headers,
  );
}

const challenge = (scope: ManagementScope, params: Record<string, string> = {}) =>
  [
    'Bearer realm="keyfob"',
    `scope="${scope}"`,
    ...Object.entries(params).map(([name, value]) => `${name}="${errorDescription(value)}"`),
  ].join(", ");

/** What a route needs: every read keyfob:read, a change the scope of what it changes (lib/admin/scopes.ts). */
const WRITE_SCOPES: Record<string, ManagementScope> = {
  Clients: "keyfob:clients",
  "Signing keys": "keyfob:keys",
  Accounts: "keyfob:accounts",
  Sessions: "keyfob:accounts",
  Tokens: "keyfob:accounts",
  Admins: ADMIN_SCOPE,
};
export const requiredScope = (route: ApiRoute): ManagementScope =>
  route.method === "GET" ? "keyfob:read" : (WRITE_SCOPES[route.tag] ?? ADMIN_SCOPE);

/**
 * The admin behind a request's bearer token, for a route that needs `scope`: the token verified like
 * every access token (signature, issuer, expiry, recorded and not revoked, its key not revoked),
 * carrying the scope, for the management API (its `aud` the client, not a resource server it was
 * asked for with `resource`, RFC 8707), and issued to a client that is still enabled, confidential,
 * allowed the management API and, at this moment, that scope (so narrowing a client's scopes is
 * effective at once).
 */
export async function authenticateApiAdmin(
  k: Pick<Keyfob, "config" | "clock" | "store" | "keys" | "macKeys" | "audit">,
  request: HttpRequest,
  scope: ManagementScope,
): Promise<Admin> {
  if (!request.headers.has("authorization"))
    throw new ApiError(401, "invalid_token", "an access token is required: Authorization: Bearer <token>", {
      headers: { "WWW-Authenticate": challenge(scope) },
    });
  let token: ActiveToken;
  try {
    // A token bound to a DPoP key (client_credentials with a proof) comes with a proof of it (RFC 9449 7).
    token = await verifyPresentedToken(k, request, presentedToken(request), `${k.config.issuerUrl}${new URL(request.url).pathname}`);
  } catch (error) {
    if (error instanceof OAuthError && error.status < 500) {
      const dpop = error.challenge?.startsWith("DPoP ");
      throw new ApiError(401, error.code, error.message, {
        headers: {
          "WWW-Authenticate": dpop ? error.challenge! : challenge(scope, { error: error.code, error_description: error.message }),
          ...(request.headers.has("dpop") && { "DPoP-Nonce": dpopNonce(k) }),
        },
      });
    }
    throw error;
  }
  const clientId = token.clientId;
  // A token for a resource server is that server's: one that received it cannot use it here (RFC 8707 1).
  if (token.payload.aud !== clientId) {
    const description = "the token was issued for another audience (a resource), not for the management API";
    throw new ApiError(401, "invalid_token", description, {
      headers: { "WWW-Authenticate": challenge(scope, { error: "invalid_token", error_description: description }) },
    });
  }
  const refuse = async (code: string, description: string, headers?: Record<string, string>) => {
    k.audit.record({
      action: "admin_api.refused",
      outcome: code,
      clientId,
      detail: `${request.method} ${new URL(request.url).pathname}: ${description}`,
    });
    return new ApiError(403, code, description, { headers });
  };
  const held = String(token.payload.scope ?? "").split(" ");
  if (!covers(held, scope)) {
    throw await refuse("insufficient_scope", `this needs a token with the ${scope} scope (or ${ADMIN_SCOPE})`, {
      "WWW-Authenticate": challenge(scope, { error: "insufficient_scope" }),
    });
  }
  const client = await k.store.clients.find(clientId);
  if (!client?.enabled || !client.managementApi || client.secretHash === null) {
    throw await refuse("access_denied", "the token's client is no longer allowed the management API");
  }
  if (!covers(client.managementScopes, scope))
    throw await refuse("access_denied", `the token's client is no longer allowed the ${scope} scope`);
  // What it may do: its token's scopes that its client still holds.
  const scopes = held.filter((s) => isManagementScope(s) && covers(client.managementScopes, s)) as ManagementScope[];
  return { accountId: `client:${clientId}`, label: `api:${clientId}`, scopes };
}

// Routes.

type Context = { k: Keyfob; admin: Admin; params: Record<string, string>; query: URLSearchParams; body: Record<string, unknown> };
export type ApiRoute = {
  method: "GET" | "POST" | "PATCH" | "DELETE";
  /** e.g. `/clients/{clientId}/signers/{address}` */
  path: string;
  summary: string;
  tag: string;
  /** The admin change the route runs (its zod input describes the body, less the path's parameters). */
  change?: AdminChangeName;
  /** The status of a success, when not 200 (the OpenAPI document says it). */
  status?: 201 | 204;
  /** What a success answers (lib/admin/api-schemas.ts): the answer is encoded through it, and the document describes it. None for 204 and CSV (a route with neither answers the text its handle returns as CSV). */
  response?: ResponseName;
  /** Query parameters of a read. */
  query?: Record<string, string>;
  /** The body fields the route takes (others of the action's input come from the path). */
  body?: string[];
  handle: (c: Context) => Promise<unknown>;
};

/**
 * Runs an admin change with the body and the path's parameters; refusals become 400 (404 for an
 * unknown client or account), and what this instance cannot do (a key change with another
 * KEYFOB_SECRET than its peers') 503, which another instance behind the balancer may serve.
 */
async function perform(c: Context, name: AdminChangeName, input: Record<string, unknown>) {
  const result = await runAdminChange(c.k, c.admin, name, { ...c.body, ...input });
  if (result.ok) return result.value;
  if (result.status === 503) throw new ApiError(503, "temporarily_unavailable", result.error, { headers: { "Retry-After": "5" } });
  if (result.scope)
    throw new ApiError(403, "insufficient_scope", result.error, {
      headers: { "WWW-Authenticate": challenge(result.scope, { error: "insufficient_scope" }) },
    });
  const fieldErrors = result.fieldErrors ?? {};
  const missing = Object.entries(fieldErrors).find(
    ([field, message]) => ["clientId", "accountId"].includes(field) && message.startsWith("no "),
  );
  if (missing) throw new ApiError(404, "not_found", missing[1]);
  const reasons = Object.entries(fieldErrors).map(([field, message]) => `${field}: ${message}`);
  throw new ApiError(400, "invalid_request", reasons.length ? reasons.join("; ") : result.error, { fieldErrors });
}

const page = (query: URLSearchParams) => {
  const n = Number.parseInt(query.get("page") ?? "1", 10);
  return Number.isFinite(n) && n > 0 ? Math.min(n, 100_000) : 1;
};

const queryValue = (query: URLSearchParams) => (name: string) => query.get(name) ?? "";

/** A list's filters (lib/admin/filters.ts, as the dashboard reads them), or 400 with a field error for each one that cannot be used. */
function valid<T extends { errors: FilterErrors<string> }>(parsed: T): T {
  const problems = Object.entries(parsed.errors) as [string, string][];
  if (problems.length > 0)
    throw new ApiError(400, "invalid_request", problems.map(([f, m]) => `${f}: ${m}`).join("; "), {
      fieldErrors: Object.fromEntries(problems),
    });
  return parsed;
}

async function client(c: Context) {
  const found = await ops.getClient(c.k, c.admin, c.params.clientId);
  if (!found) throw notFound(`client with id ${c.params.clientId}`);
  return found;
}

async function account(c: Context) {
  const reference = await ops.resolveAccountReference(c.k, c.admin, c.params.accountId);
  if (reference && "ambiguous" in reference)
    throw new ApiError(400, "invalid_request", `several accounts have this email: ${reference.ambiguous.join(", ")}`);
  const found = reference && (await ops.getAccount(c.k, c.admin, reference.id));
  if (!found) throw notFound(`account ${c.params.accountId}`);
  return found;
}

/** Client objects as the API shows them: settings and lists, never the secret's hash. */
export function clientView(found: ops.AdminClient) {
  return {
    id: found.id,
    name: found.name,
    logoUrl: found.logoUrl,
    enabled: found.enabled,
    confidential: found.confidential,
    // When the secret a rotation replaced stops working (null: no overlap under way).
    secretOverlapEndsAt: found.secretOverlapEndsAt,
    requirePkce: found.requirePkce,
    resourceServer: found.resourceServer,
    refreshTokensAllowed: found.refreshTokensAllowed,
    managementApi: found.managementApi,
    managementScopes: found.managementScopes,
    requirePushedAuthorizationRequests: found.requirePushedAuthorizationRequests,
    requireConsent: found.requireConsent,
    backchannelLogoutUri: found.backchannelLogoutUri,
    backchannelLogoutSessionRequired: found.backchannelLogoutSessionRequired,
    deviceFlow: found.deviceFlow,
    deviceFlowOfflineAccess: found.deviceFlowOfflineAccess,
    tokenExchange: found.tokenExchange,
    dpopBoundAccessTokens: found.dpopBoundAccessTokens,
    resources: found.resources,
    tokenEndpointAuthMethod: found.tokenEndpointAuthMethod,
    jwks: found.jwks ?? null,
    jwksUri: found.jwksUri,
    idTokenSignedResponseAlg: found.idTokenSignedResponseAlg,
    createdAt: found.createdAt,
    redirectUris: found.redirectUris.map((r) => r.uri),
    postLogoutRedirectUris: found.postLogoutRedirectUris.map((r) => r.uri),
    allowedOrigins: found.allowedOrigins.map((o) => o.origin),
    signers: found.signers.map(({ address, enabledAt, expiresAt, revokedAt }) => ({ address, enabledAt, expiresAt, revokedAt })),
  };
}

/** A list of a client's values: read, add (body field `field`), remove (`?<field>=`). */
function valueList(
  path: string,
  label: string,
  field: "uri" | "origin",
  part: "redirectUris" | "postLogoutRedirectUris" | "allowedOrigins",
  add: AdminChangeName,
  remove: AdminChangeName,
): ApiRoute[] {
  return [
    {
      method: "GET",
      path: `/clients/{clientId}/${path}`,
      summary: `List the client's ${label}`,
      tag: "Clients",
      response: "values",
      handle: async (c) => ({ items: clientView(await client(c))[part] }),
    },
    {
      method: "POST",
      path: `/clients/{clientId}/${path}`,
      summary: `Add one of the client's ${label}`,
      tag: "Clients",
      status: 201,
      response: "values",
      change: add,
      body: [field],
      handle: async (c) => {
        await perform(c, add, { clientId: c.params.clientId });
        return { items: clientView(await client(c))[part] };
      },
    },
    {
      method: "DELETE",
      path: `/clients/{clientId}/${path}`,
      summary: `Remove one of the client's ${label} (?${field}=…, exactly as registered)`,
      tag: "Clients",
      status: 204,
      change: remove,
      query: { [field]: `the value to remove, exactly as registered` },
      handle: async (c) => {
        await perform(c, remove, { clientId: c.params.clientId, [field]: c.query.get(field) ?? "" });
        return undefined;
      },
    },
  ];
}

const filterQuery = { client: "a client_id", account: "an account id (0x address)", page: "page number, 20 items a page" };

export const ROUTES: ApiRoute[] = [
  // Clients.
  {
    method: "GET",
    path: "/clients",
    summary: "List clients, newest first; search by id or name",
    tag: "Clients",
    query: { search: "text found in the id or name, any case (at most 200 characters)", page: "page number, 20 items a page" },
    response: "clients",
    handle: async (c) => ops.listClients(c.k, c.admin, { search: valid(parseSearch(queryValue(c.query))).search, page: page(c.query) }),
  },
  {
    method: "POST",
    path: "/clients",
    summary: "Register a client (id optional: a license address, any id, or generated)",
    tag: "Clients",
    status: 201,
    response: "client",
    change: "client.create",
    body: ["id", "name", "logoUrl"],
    handle: async (c) => {
      const { clientId } = (await perform(c, "client.create", {})) as { clientId: string };
      return clientView((await ops.getClient(c.k, c.admin, clientId))!);
    },
  },
  {
    method: "GET",
    path: "/clients/{clientId}",
    summary: "A client with its settings, redirect URIs, origins and signers",
    tag: "Clients",
    response: "client",
    handle: async (c) => clientView(await client(c)),
  },
  {
    method: "PATCH",
    path: "/clients/{clientId}",
    summary: "Change a client's settings (any subset); audited with each value before and after",
    tag: "Clients",
    response: "client",
    change: "client.update",
    body: [
      "name",
      "logoUrl",
      "enabled",
      "requirePkce",
      "resourceServer",
      "refreshTokensAllowed",
      "managementApi",
      "managementScopes",
      "requirePushedAuthorizationRequests",
      "requireConsent",
      "backchannelLogoutUri",
      "backchannelLogoutSessionRequired",
      "deviceFlow",
      "deviceFlowOfflineAccess",
      "tokenExchange",
      "dpopBoundAccessTokens",
      "resources",
      "idTokenSignedResponseAlg",
    ],
    handle: async (c) => {
      await perform(c, "client.update", { clientId: c.params.clientId });
      return clientView(await client(c));
    },
  },
  {
    method: "DELETE",
    path: "/clients/{clientId}",
    summary: "Delete a client with its redirect URIs, signers and token records",
    tag: "Clients",
    status: 204,
    change: "client.delete",
    handle: async (c) => {
      await perform(c, "client.delete", { clientId: c.params.clientId });
    },
  },
  {
    method: "POST",
    path: "/clients/{clientId}/secret",
    summary:
      "Generate or rotate the client's secret (returned once, stored hashed); overlapSeconds keeps the replaced one valid that long (previousSecretExpiresAt)",
    tag: "Clients",
    status: 201,
    response: "secret",
    change: "client.rotate_secret",
    body: ["overlapSeconds"],
    handle: async (c) => ({
      clientId: (await client(c)).id,
      ...(await perform(c, "client.rotate_secret", { clientId: c.params.clientId })),
    }),
  },
  {
    method: "POST",
    path: "/clients/{clientId}/authentication",
    summary: "Set how the client authenticates: client assertions (private_key_jwt with its keys, client_secret_jwt) or its secret",
    tag: "Clients",
    response: "client",
    change: "client.set_authentication",
    body: ["tokenEndpointAuthMethod", "jwks", "jwksUri"],
    handle: async (c) => {
      await perform(c, "client.set_authentication", { clientId: c.params.clientId });
      return clientView(await client(c));
    },
  },
  {
    method: "DELETE",
    path: "/clients/{clientId}/secret/previous",
    summary: "End a secret rotation's overlap now: the replaced secret stops working",
    tag: "Clients",
    status: 204,
    change: "client.end_secret_overlap",
    handle: async (c) => {
      await perform(c, "client.end_secret_overlap", { clientId: c.params.clientId });
    },
  },
  ...valueList("redirect-uris", "redirect URIs", "uri", "redirectUris", "redirect_uri.add", "redirect_uri.remove"),
  ...valueList(
    "post-logout-redirect-uris",
    "post-logout redirect URIs",
    "uri",
    "postLogoutRedirectUris",
    "post_logout_redirect_uri.add",
    "post_logout_redirect_uri.remove",
  ),
  ...valueList("allowed-origins", "allowed origins (CORS)", "origin", "allowedOrigins", "allowed_origin.add", "allowed_origin.remove"),
  {
    method: "GET",
    path: "/clients/{clientId}/signers",
    summary: "List the client's signers (active, expired and revoked)",
    tag: "Clients",
    response: "signers",
    handle: async (c) => ({ items: clientView(await client(c)).signers }),
  },
  {
    method: "POST",
    path: "/clients/{clientId}/signers",
    summary: "Enable a signer for the client (optional expiry)",
    tag: "Clients",
    status: 201,
    response: "signerAdded",
    change: "signer.add",
    body: ["address", "expiresAt"],
    handle: (c) => perform(c, "signer.add", { clientId: c.params.clientId }),
  },
  {
    method: "DELETE",
    path: "/clients/{clientId}/signers/{address}",
    summary: "Revoke a signer (applies to the next token request)",
    tag: "Clients",
    status: 204,
    change: "signer.revoke",
    handle: async (c) => {
      await perform(c, "signer.revoke", { clientId: c.params.clientId, address: c.params.address });
    },
  },

  // Signing keys.
  {
    method: "GET",
    path: "/keys",
    summary: "The signing-key schedule: upcoming, current, retired",
    tag: "Signing keys",
    response: "keys",
    handle: async (c) => ({ items: await ops.keySchedule(c.k, c.admin) }),
  },
  {
    method: "POST",
    path: "/keys/rotate",
    summary: "Publish a new key now (of `alg`, or of every alg in use and the vehicle set); it signs after KEY_PUBLISH_LEAD",
    tag: "Signing keys",
    response: "keys",
    change: "key.rotate",
    body: ["alg"],
    handle: async (c) => {
      await perform(c, "key.rotate", {});
      return { items: await ops.keySchedule(c.k, c.admin) };
    },
  },
  {
    method: "POST",
    path: "/keys/{kid}/revoke",
    summary: "Emergency revocation: unpublish the key and refuse every token it signed",
    tag: "Signing keys",
    response: "keyRevocation",
    change: "key.revoke",
    handle: (c) => perform(c, "key.revoke", { kid: c.params.kid }),
  },

  // Accounts and sessions.
  {
    method: "GET",
    path: "/accounts",
    summary: "Find accounts by address (its own or a linked wallet's), email or id",
    tag: "Accounts",
    query: {
      search: "an address, an email, or text in an id, subject or email (at most 200 characters)",
      page: "page number, 20 items a page",
    },
    response: "accounts",
    handle: (c) => ops.listAccounts(c.k, c.admin, { search: valid(parseSearch(queryValue(c.query))).search, page: page(c.query) }),
  },
  {
    method: "GET",
    path: "/accounts/{accountId}",
    summary: "An account (by id, linked wallet address or email): identities, wallets, live sessions, holdings",
    tag: "Accounts",
    response: "account",
    handle: account,
  },
  {
    method: "POST",
    path: "/accounts/{accountId}/block",
    summary: "Block: no login anywhere, and its sessions, codes, access and refresh tokens revoked at once",
    tag: "Accounts",
    response: "blocked",
    change: "account.block",
    handle: async (c) => perform(c, "account.block", { accountId: (await account(c)).id }),
  },
  {
    method: "POST",
    path: "/accounts/{accountId}/unblock",
    summary: "Unblock (nothing revoked comes back)",
    tag: "Accounts",
    response: "account",
    change: "account.unblock",
    handle: async (c) => {
      await perform(c, "account.unblock", { accountId: (await account(c)).id });
      return account(c);
    },
  },
  {
    method: "DELETE",
    path: "/accounts/{accountId}",
    summary: "Delete an account with its identities and sessions, revoking what it holds",
    tag: "Accounts",
    response: "accountDeleted",
    change: "account.delete",
    handle: async (c) => perform(c, "account.delete", { accountId: (await account(c)).id }),
  },
  {
    method: "GET",
    path: "/accounts/{accountId}/sessions",
    summary: "The account's live login sessions",
    tag: "Sessions",
    response: "sessions",
    handle: async (c) => ({ items: (await account(c)).sessions }),
  },
  {
    method: "DELETE",
    path: "/accounts/{accountId}/sessions",
    summary: "Revoke every login session of the account",
    tag: "Sessions",
    response: "revoked",
    change: "session.revoke",
    handle: async (c) => perform(c, "session.revoke", { accountId: (await account(c)).id }),
  },
  {
    method: "DELETE",
    path: "/accounts/{accountId}/sessions/{sessionId}",
    summary: "Revoke one login session",
    tag: "Sessions",
    status: 204,
    change: "session.revoke",
    handle: async (c) => {
      await perform(c, "session.revoke", { accountId: (await account(c)).id, sessionId: c.params.sessionId });
    },
  },

  {
    method: "GET",
    path: "/accounts/{accountId}/consents",
    summary: "What the account allowed third-party clients (those that require consent): scopes and when",
    tag: "Consents",
    response: "consents",
    handle: async (c) => ({ items: (await account(c)).consents }),
  },
  {
    method: "DELETE",
    path: "/accounts/{accountId}/consents/{clientId}",
    summary: "Revoke the account's consent to a client, ending the client's refresh tokens for the account",
    tag: "Consents",
    response: "revoked",
    change: "consent.revoke",
    handle: async (c) => perform(c, "consent.revoke", { accountId: (await account(c)).id, clientId: c.params.clientId }),
  },

  // Tokens.
  {
    method: "GET",
    path: "/tokens",
    summary: "Active access tokens of a client and/or an account (its wallets' too), newest first; kind=vehicle: vehicle tokens only",
    tag: "Tokens",
    query: { ...filterQuery, kind: "vehicle: only vehicle tokens (RFC 8693 token exchange); absent: every token" },
    response: "tokens",
    handle: (c) => ops.listActiveTokens(c.k, c.admin, { ...valid(parseTokenQuery(queryValue(c.query))).filter, page: page(c.query) }),
  },
  {
    method: "POST",
    path: "/tokens/revoke",
    summary: "Revoke one access token (jti), or every active one of a client or an account",
    tag: "Tokens",
    response: "revoked",
    change: "token.revoke",
    body: ["jti", "clientId", "accountId"],
    handle: (c) => perform(c, "token.revoke", {}),
  },
  {
    method: "GET",
    path: "/refresh-grants",
    summary: "Live refresh-token grants (one per login) of a client and/or an account",
    tag: "Tokens",
    query: filterQuery,
    response: "refreshGrants",
    handle: (c) => ops.listRefreshGrants(c.k, c.admin, { ...valid(parseHolderQuery(queryValue(c.query))).filter, page: page(c.query) }),
  },
  {
    method: "POST",
    path: "/refresh-grants/revoke",
    summary: "Revoke one refresh grant (familyId), or every grant of a client or an account, with their access tokens",
    tag: "Tokens",
    response: "revoked",
    change: "refresh_token.revoke",
    body: ["familyId", "clientId", "accountId"],
    handle: (c) => perform(c, "refresh_token.revoke", {}),
  },

  // Audit log.
  {
    method: "GET",
    path: "/audit",
    summary: "The audit log, newest first, filtered",
    tag: "Audit log",
    query: {
      action: "an action (token.failed) or a prefix ending in a dot (client.)",
      outcome: "success, rejected, forbidden, error, or an OAuth error code",
      client: "a client_id",
      account: "an account id (0x address)",
      from: "first UTC day, YYYY-MM-DD",
      to: "last UTC day (inclusive), YYYY-MM-DD",
      page: "page number, 20 items a page",
    },
    response: "audit",
    handle: (c) => ops.auditEvents(c.k, c.admin, { ...valid(parseAuditQuery(queryValue(c.query))).filter, page: page(c.query) }),
  },
  {
    method: "GET",
    path: "/audit.csv",
    summary: "The filtered audit log as CSV (UTC times), at most 100 000 rows",
    tag: "Audit log",
    query: {
      action: "as for /audit",
      outcome: "as for /audit",
      client: "as for /audit",
      account: "as for /audit",
      from: "as for /audit",
      to: "as for /audit",
    },
    handle: (c) => ops.auditCsv(c.k, c.admin, valid(parseAuditQuery(queryValue(c.query))).filter),
  },

  // Admins.
  {
    method: "GET",
    path: "/admins",
    summary: "Accounts granted the admin role (the configured ones are not listed)",
    tag: "Admins",
    response: "admins",
    handle: async (c) => ({ items: await ops.listAdmins(c.k, c.admin) }),
  },
  {
    method: "POST",
    path: "/admins",
    summary: "Grant the admin role to an account",
    tag: "Admins",
    status: 201,
    response: "done",
    change: "admin.grant",
    body: ["accountId"],
    handle: (c) => perform(c, "admin.grant", {}),
  },
  {
    method: "DELETE",
    path: "/admins/{accountId}",
    summary: "Revoke an account's admin role",
    tag: "Admins",
    status: 204,
    change: "admin.revoke",
    handle: async (c) => {
      await perform(c, "admin.revoke", { accountId: c.params.accountId });
    },
  },
];

/** The route and its path parameters for a method and the path after API_BASE (segments percent-decoded). */
export function matchRoute(
  method: string,
  path: string,
): { route: ApiRoute; params: Record<string, string> } | { allowed: string[] } | undefined {
  let segments: string[];
  try {
    segments = path.split("/").filter(Boolean).map(decodeURIComponent);
  } catch {
    return undefined;
  }
  // No id, address or email has a control character (and PostgreSQL refuses NUL): nothing is there.
  if (segments.some(hasControlCharacter)) return undefined;
  const allowed: string[] = [];
  for (const route of ROUTES) {
    const pattern = route.path.split("/").filter(Boolean);
    if (pattern.length !== segments.length) continue;
    const params: Record<string, string> = {};
    const matches = pattern.every((part, i) => {
      if (!part.startsWith("{")) return part === segments[i];
      params[part.slice(1, -1)] = segments[i];
      return segments[i] !== "";
    });
    if (!matches) continue;
    if (route.method === method) return { route, params };
    allowed.push(route.method);
  }
  return allowed.length ? { allowed } : undefined;
}

/** The JSON object a change sends (the body read as every endpoint's is: at most MAX_BODY_BYTES, else 413). */
async function readBody(request: HttpRequest): Promise<Record<string, unknown>> {
  if (request.method === "GET" || request.method === "DELETE") return {};
  const raw = await readBodyText(request);
  if (raw.trim() === "") return {};
  if (!/^application\/json\b/i.test(request.headers.get("content-type") ?? ""))
    throw new ApiError(415, "invalid_request", "the body must be JSON (Content-Type: application/json)");
  let body: unknown;
  try {
    body = JSON.parse(raw);
  } catch {
    throw new ApiError(400, "invalid_request", "the body is not valid JSON");
  }
  if (typeof body !== "object" || body === null || Array.isArray(body))
    throw new ApiError(400, "invalid_request", "the body must be a JSON object");
  return body as Record<string, unknown>;
}

/**
 * The management API as a protocol route (lib/http/routes.ts): its refusals in its documented
 * shape; what else fails is mapped, logged and counted by the route's serving.
 */
export function managementApi(openapi: (k: Keyfob) => unknown): Resource {
  return {
    answer: async (k, request) => {
      try {
        return await answerApiRequest(k, request, openapi);
      } catch (error) {
        if (error instanceof ApiError) return { answer: apiError(error), refused: error.code };
        throw error;
      }
    },
    refuse: (failure) =>
      apiError(
        new ApiError(
          failure.status,
          failure.code,
          failure.message,
          failure.retryAfter || failure.status === 503 ? { headers: { "Retry-After": String(failure.retryAfter ?? 5) } } : {},
        ),
      ),
  };
}

async function answerApiRequest(k: Keyfob, request: HttpRequest, openapi: (k: Keyfob) => unknown): Promise<Answer> {
  const url = new URL(request.url);
  const path = url.pathname.startsWith(API_BASE) ? url.pathname.slice(API_BASE.length) : url.pathname;
  if (path === "/openapi.json" && request.method === "GET") return apiJson(openapi(k), 200, { "Cache-Control": "public, max-age=300" });
  const match = matchRoute(request.method, path);
  // Who asks comes first: without a valid token, nothing is told about the resource.
  const admin = await authenticateApiAdmin(k, request, match && "route" in match ? requiredScope(match.route) : "keyfob:read");
  if (!match) throw new ApiError(404, "not_found", `no such resource: ${request.method} ${API_BASE}${path}`);
  if ("allowed" in match)
    throw new ApiError(405, "invalid_request", `use ${match.allowed.join(" or ")} here`, {
      headers: { Allow: match.allowed.join(", ") },
    });
  const body = await readBody(request);
  const result = await match.route.handle({ k, admin, params: match.params, query: url.searchParams, body });
  const { response, status } = match.route;
  // Neither a schema nor 204: CSV (the audit log's export).
  if (!response && status !== 204)
    return { status: 200, headers: { "Content-Type": "text/csv; charset=utf-8", "Cache-Control": "no-store" }, body: result as string };
  return apiJson(response ? z.encode(RESPONSES[response], result as never) : undefined, status ?? 200);
}
