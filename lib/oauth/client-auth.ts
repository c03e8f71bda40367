import { createHash, timingSafeEqual } from "node:crypto";
import type { ClientCache } from "../clients/cache";
import { normalizeClientId } from "../clients/client-id";
import type { Store } from "../store";
import { previousSecret } from "../store/clients";
import type { SigningAlg, TokenClientRow } from "../store/contract";
import {
  assertionIssuer,
  CLIENT_ASSERTION_TYPE,
  CLIENT_SECRET_JWT,
  PRIVATE_KEY_JWT,
  verifyClientAssertion,
  type AssertionVerifier,
  type LicenseSignature,
} from "./client-assertion";
import { invalidClient, invalidRequest } from "./errors";
import { hasControlCharacter, type Params } from "./params";
import type { HttpRequest } from "../http/request";

export type AuthenticatedClient = {
  id: string;
  confidential: boolean;
  resourceServer?: boolean;
  /** Known when the client was read for the request: the token statements check them again in the database (lib/store). */
  secretHash?: string | null;
  refreshTokensAllowed?: boolean;
  managementScopes?: string[];
  /** Its token requests must carry a DPoP proof (RFC 9449 5.2). */
  dpopBoundAccessTokens?: boolean;
  /** May exchange its access tokens for vehicle tokens (RFC 8693, lib/vehicles). */
  tokenExchange?: boolean;
  /** Its registered resources (RFC 8707, lib/oauth/resource.ts). */
  resources?: string[];
  /** The alg its ID and access tokens are signed with (id_token_signed_response_alg); RS256 when not known. */
  idTokenSignedResponseAlg?: SigningAlg;
  /**
   * A license authenticated by an assertion one of its signers (or it) signed: how, and which
   * signer. Its client_credentials token is then Flow A's for that signature.
   */
  licenseSignature?: LicenseSignature;
};

/** What authentication needs of a client. */
type StoredClient = Omit<TokenClientRow, "origins">;

/** Client secrets are 256-bit random values, so a SHA-256 is enough to keep them unusable at rest. */
export function clientSecretHash(secret: string): string {
  return createHash("sha256").update(secret).digest("base64url");
}

/** Where a request's client is read from: the instance's client cache, or the database. */
export type ClientSource = (id: string) => Promise<StoredClient | null | undefined>;

/**
 * The instance's client cache (lib/clients/cache.ts; docs/decisions/2026-11-23-client-cache.md),
 * which every change to a client drops on every instance: for the token endpoint, whose statements
 * check the client again in the database.
 */
export const cachedClients =
  (clients: ClientCache): ClientSource =>
  (id) =>
    clients.get(id);

/** The database, as of now: for revocation, introspection and PAR, which write or answer on the client's word alone. */
export const storedClients =
  (store: Store): ClientSource =>
  async (id) => {
    const client = await store.clients.find(id);
    return client
      ? {
          ...client,
          previousSecret: previousSecret(client),
          managementScopes: client.managementApi ? client.managementScopes : [],
          // The column's CHECK holds it to SIGNING_ALGS.
          idTokenSignedResponseAlg: client.idTokenSignedResponseAlg as SigningAlg,
        }
      : undefined;
  };

/** Refuses a public client where only a confidential one may call (introspection is for resource servers). */
export function requireConfidential(client: AuthenticatedClient): AuthenticatedClient {
  if (!client.confidential) throw invalidClient("this endpoint requires a client with a secret");
  return client;
}

/**
 * Refuses (invalid_client) a client disabled or given a new secret since it was read for this
 * request (from the cache): why a statement that re-checks the client in the database found nothing.
 */
export async function refuseChangedClient(store: Store, client: { id: string; secretHash?: string | null }): Promise<void> {
  const current = await store.clients.findForTokens(client.id);
  if (!current?.enabled) throw invalidClient("unknown or disabled client");
  if (client.secretHash !== undefined && current.secretHash !== client.secretHash)
    throw invalidClient("client authentication failed: the client's secret was replaced while the request was handled");
}

/** How a client authenticated (RFC 7591 token_endpoint_auth_method), for the reasons of a refusal. */
type AuthMethod = "client_secret_basic" | "client_secret_post" | "none";

/**
 * Why a client's authentication failed, as the client and the audit log are told: what was wrong
 * with the secret, the method it came by and, at the token endpoint, the grant (never the secret).
 */
function authFailure(problem: string, method: AuthMethod, grant: string | undefined) {
  return invalidClient(`client authentication failed: ${problem} (${method}${grant ? `, grant_type ${grant}` : ""})`);
}

/**
 * Authenticates the client of a protocol request (RFC 6749 2.3): client_secret_basic or
 * client_secret_post for clients with a secret, client_id alone for public clients, a client
 * assertion (RFC 7523, lib/oauth/client-assertion.ts) for clients registered for private_key_jwt,
 * which may use nothing else. A protocol
 * request does this once, when first asked (ProtocolRequest.client), for its limits and its action
 * alike (docs/decisions/2026-11-24-client-authenticated-once-per-request.md).
 */
export async function authenticateClient(
  find: ClientSource,
  request: HttpRequest,
  params: Params,
  now: Date,
  assertions: AssertionVerifier,
): Promise<AuthenticatedClient> {
  const assertion = params.get("client_assertion");
  if (assertion !== undefined || params.get("client_assertion_type") !== undefined)
    return authenticateAssertion(find, request, params, assertion, now, assertions);
  const basic = parseBasic(request.headers.get("authorization"));
  const postedSecret = params.get("client_secret");
  if (basic && postedSecret !== undefined) throw invalidRequest("use one client authentication method, not two");
  const postedId = params.get("client_id");
  if (basic && postedId !== undefined && normalizeClientId(postedId) !== normalizeClientId(basic.id)) {
    throw invalidRequest("client_id does not match the authenticated client");
  }
  const rawId = basic?.id ?? postedId;
  if (rawId === undefined) throw invalidClient("client authentication is required");
  const secret = basic?.secret ?? postedSecret;
  const method: AuthMethod = basic ? "client_secret_basic" : postedSecret !== undefined ? "client_secret_post" : "none";
  // At the token endpoint, the grant the request asked for (revocation and introspection have none).
  const grant = params.get("grant_type");

  const client = await find(normalizeClientId(rawId));
  if (!client?.enabled) throw invalidClient("unknown or disabled client");
  const known = knownOf(client);
  if (client.tokenEndpointAuthMethod !== null)
    throw authFailure(`the client is registered for ${client.tokenEndpointAuthMethod}: send a client_assertion`, method, grant);
  if (client.secretHash) {
    if (secret === undefined)
      throw authFailure("the client has a secret, and none was sent (use client_secret_basic or client_secret_post)", method, grant);
    const presented = clientSecretHash(secret);
    // During a rotation's overlap the secret it replaced works too, until its end; after it, that
    // secret is as wrong as any other (saying it was once right would confirm a leaked one).
    const previous = client.previousSecret;
    const inOverlap = previous !== null && previous.expiresAt > now && sameDigest(presented, previous.hash);
    if (!sameDigest(presented, client.secretHash) && !inOverlap) throw authFailure("wrong client_secret", method, grant);
    return { id: client.id, confidential: true, resourceServer: client.resourceServer, ...known };
  }
  if (secret !== undefined) throw authFailure("a client_secret was sent, but the client is public and has none", method, grant);
  return { id: client.id, confidential: false, ...known };
}

/**
 * A client assertion (client_assertion with client_assertion_type jwt-bearer), of a client
 * registered for private_key_jwt (confidential, whether or not it has a secret too) or
 * client_secret_jwt. The secret's
 * hash as read is passed on like any method's, so the token statements' check of it holds.
 */
async function authenticateAssertion(
  find: ClientSource,
  request: HttpRequest,
  params: Params,
  assertion: string | undefined,
  now: Date,
  assertions: AssertionVerifier,
): Promise<AuthenticatedClient> {
  if (usesBasic(request.headers.get("authorization")) || params.get("client_secret") !== undefined)
    throw invalidRequest("use one client authentication method, not two");
  if (params.get("client_assertion_type") !== CLIENT_ASSERTION_TYPE)
    throw invalidClient(`client authentication failed: client_assertion_type must be ${CLIENT_ASSERTION_TYPE} (private_key_jwt)`);
  if (!assertion) throw invalidClient("client authentication failed: client_assertion_type was sent without a client_assertion");
  const postedId = params.get("client_id");
  const issuer = assertionIssuer(assertion);
  const rawId = postedId ?? issuer;
  if (rawId === undefined) throw invalidClient("client authentication failed: the client_assertion names no client (iss)");
  if (postedId !== undefined && issuer !== undefined && normalizeClientId(postedId) !== normalizeClientId(issuer))
    throw invalidClient("client authentication failed: client_id does not match the client_assertion's iss");
  const client = await find(normalizeClientId(rawId));
  if (!client?.enabled) throw invalidClient("unknown or disabled client");
  const method = client.tokenEndpointAuthMethod;
  if (method !== PRIVATE_KEY_JWT && method !== CLIENT_SECRET_JWT)
    throw invalidClient("client authentication failed: the client is not registered for private_key_jwt or client_secret_jwt");
  const endpoint = `${assertions.issuer}${new URL(request.url).pathname}`;
  const licenseSignature = await verifyClientAssertion(
    assertion,
    { ...client, tokenEndpointAuthMethod: method },
    endpoint,
    assertions,
    now,
  );
  return {
    id: client.id,
    confidential: true,
    resourceServer: client.resourceServer,
    ...knownOf(client),
    ...(licenseSignature && { licenseSignature }),
  };
}

/** What the endpoints need to know of the client beyond its id. */
const knownOf = (client: StoredClient) => ({
  secretHash: client.secretHash,
  refreshTokensAllowed: client.refreshTokensAllowed,
  managementScopes: client.managementScopes,
  dpopBoundAccessTokens: client.dpopBoundAccessTokens,
  tokenExchange: client.tokenExchange,
  resources: client.resources,
  idTokenSignedResponseAlg: client.idTokenSignedResponseAlg,
});

function sameDigest(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** Whether the client authenticated (or tried to) with HTTP Basic: what its invalid_client is challenged with (RFC 6749 5.2). */
export const usesBasic = (header: string | null): header is string => header?.toLowerCase().startsWith("basic ") ?? false;

/** `Authorization: Basic` with form-urlencoded id and secret (RFC 6749 2.3.1). */
export function parseBasic(header: string | null): { id: string; secret: string } | undefined {
  if (!usesBasic(header)) return undefined;
  const decoded = Buffer.from(header.slice(6).trim(), "base64").toString("utf8");
  const colon = decoded.indexOf(":");
  if (colon < 0) throw invalidClient("malformed Basic authorization header");
  let credentials: { id: string; secret: string };
  try {
    credentials = {
      id: decodeURIComponent(decoded.slice(0, colon).replace(/\+/g, " ")),
      secret: decodeURIComponent(decoded.slice(colon + 1).replace(/\+/g, " ")),
    };
  } catch {
    throw invalidClient("malformed Basic authorization header");
  }
  // Refused like a control character in any other parameter: the id is looked up, counted and
  // audited, and PostgreSQL refuses NUL in text (a 500 or 503 otherwise).
  if (hasControlCharacter(header) || hasControlCharacter(credentials.id) || hasControlCharacter(credentials.secret)) {
    throw invalidRequest("the Basic authorization header contains a control character");
  }
  return credentials;
}
