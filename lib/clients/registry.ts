import { randomBytes } from "node:crypto";
import { getAddress, type Address } from "viem";
import type { Config } from "../config";
import type { Keyfob } from "../keyfob";
import { hostProblem } from "../http/outbound";
import { clientSecretHash } from "../oauth/client-auth";
import { CLIENT_SECRET_JWT, PRIVATE_KEY_JWT, sealClientSecret } from "../oauth/client-assertion";
import { jwksProblem } from "../oauth/client-jwks";
import { Duplicate, type Store } from "../store";
import { SIGNING_ALGS, type ClientSettings } from "../store/contract";
import { CLIENT_ID, generateClientId, isLicense, normalizeClientId } from "./client-id";
import { originProblem, redirectUriProblem } from "./redirect-uri";

/** Bad input to a registry change, naming the field at fault (for the CLI and the dashboard). */
export class RegistryError extends Error {
  override name = "RegistryError";
  constructor(
    readonly field: string,
    message: string,
    readonly refusal: Refusal = "invalid",
  ) {
    super(message);
  }
}

/** What kind of refusal: invalid input, a client or account (or what it holds) that does not exist, or a change the current state rules out. */
export type Refusal = "invalid" | "not_found" | "conflict";

export function parseAddress(value: string, field = "address"): Address {
  if (!/^0x[0-9a-fA-F]{40}$/.test(value)) throw new RegistryError(field, "must be a 0x-prefixed 20-byte hex address");
  return getAddress(value);
}

export async function createClient(store: Store, input: { id?: string; name: string; logoUrl?: string }) {
  const id = input.id?.trim() ? normalizeClientId(input.id.trim()) : generateClientId();
  const name = input.name.trim();
  const logoUrl = input.logoUrl?.trim() || null;
  if (!CLIENT_ID.test(id)) throw new RegistryError("id", "must be 1 to 128 printable characters without spaces");
  if (name.length === 0 || name.length > 200) throw new RegistryError("name", "must be 1 to 200 characters");
  if (logoUrl && !/^https:\/\/[^\s]+$/.test(logoUrl)) throw new RegistryError("logoUrl", "must be an https URL");
  try {
    return await store.clients.create({ id, name, logoUrl });
  } catch (error) {
    if (error instanceof Duplicate) throw new RegistryError("id", `a client with id ${id} already exists`, "conflict");
    throw error;
  }
}

export function listClients(store: Store) {
  return store.clients.listDetailed();
}

export async function setClientEnabled(store: Store, clientId: string, enabled: boolean) {
  return (await updateClient(store, clientId, { enabled })).after;
}

export async function deleteClient(store: Store, clientId: string) {
  await store.clients.delete(await existingClient(store, clientId));
}

/** The longest overlap a rotation may give the secret it replaces. */
export const MAX_SECRET_OVERLAP_SECONDS = 30 * 86400;

/**
 * Makes the client confidential with a new secret, replacing any previous one. The secret is
 * returned once and stored hashed. With `overlapSeconds`, the secret it replaces stays valid that
 * long (a rotation's overlap, as Keycloak's secret rotation policy), so applications can move to
 * the new one without an outage; without, it stops at once. A new rotation ends any earlier overlap.
 */
export async function rotateClientSecret(
  { store, clock, config }: Pick<Keyfob, "store" | "clock"> & { config?: Pick<Config, "secret"> },
  clientId: string,
  options: { overlapSeconds?: number } = {},
): Promise<string> {
  const { overlapSeconds = 0 } = options;
  if (!Number.isInteger(overlapSeconds) || overlapSeconds < 0 || overlapSeconds > MAX_SECRET_OVERLAP_SECONDS)
    throw new RegistryError("overlapSeconds", `must be a whole number of seconds from 0 to ${MAX_SECRET_OVERLAP_SECONDS} (30 days)`);
  const id = await existingClient(store, clientId);
  const client = await store.clients.find(id);
  const current = client?.secretHash;
  if (overlapSeconds > 0 && !current) throw new RegistryError("overlapSeconds", "the client has no secret yet to keep valid");
  const secret = randomBytes(32).toString("base64url");
  const previous =
    overlapSeconds > 0 && current ? { hash: current, expiresAt: new Date(clock.now().getTime() + overlapSeconds * 1000) } : null;
  // client_secret_jwt's HMAC needs the secret itself: kept encrypted (docs/decisions/2026-11-28-client-secret-jwt-secret-sealed.md).
  let sealed: string | null = null;
  if (client?.tokenEndpointAuthMethod === CLIENT_SECRET_JWT) {
    if (!config?.secret)
      throw new RegistryError("clientId", "a client_secret_jwt client's secret is kept encrypted: KEYFOB_SECRET is needed");
    sealed = await sealClientSecret(secret, id, config.secret);
  }
  await store.clients.setSecretHash(id, clientSecretHash(secret), previous, sealed);
  return secret;
}

/** Ends a rotation's overlap early: the secret it replaced stops working now. */
export async function endSecretOverlap({ store, clock }: Pick<Keyfob, "store" | "clock">, clientId: string) {
  if (!(await store.clients.endSecretOverlap(await existingClient(store, clientId), clock.now())))
    throw new RegistryError("clientId", "the client has no previous secret that is still valid");
}

export type { ClientSettings };

/** What a back-channel logout URI is checked against: the issuer's scheme, and the networks delivery may reach besides public ones. */
export type BackchannelLogoutRules = Pick<Config, "issuerUrl" | "backchannelLogoutAllowedNetworks">;

/**
 * Why a URI Keyfob sends requests to (a back-channel logout URI, a jwks_uri) cannot be registered,
 * or undefined: a redirect URI's rules, https when the issuer is, and a host that Keyfob may reach
 * (lib/http/outbound.ts). Without `rules`, the strictest: https, on a public host.
 */
function outboundUriProblem(uri: string, rules?: BackchannelLogoutRules): string | undefined {
  const problem = redirectUriProblem(uri);
  if (problem) return problem;
  const url = new URL(uri);
  if (url.protocol !== "https:" && (!rules || rules.issuerUrl.startsWith("https:"))) return "must use https, as the issuer does";
  return hostProblem(url.hostname, rules?.backchannelLogoutAllowedNetworks ?? []);
}

/**
 * Changes some of a client's settings; returns them before and after (for the audit log). A
 * back-channel logout URI is checked against `rules` (lib/admin/operations/clients.ts passes the configuration).
 */
export async function updateClient(
  store: Store,
  clientId: string,
  changes: Partial<ClientSettings>,
  rules?: BackchannelLogoutRules,
): Promise<{ before: ClientSettings; after: ClientSettings }> {
  if (changes.name !== undefined) {
    changes.name = changes.name.trim();
    if (changes.name.length === 0 || changes.name.length > 200) throw new RegistryError("name", "must be 1 to 200 characters");
  }
  if (changes.logoUrl !== undefined) {
    changes.logoUrl = changes.logoUrl?.trim() || null;
    if (changes.logoUrl && !/^https:\/\/[^\s]+$/.test(changes.logoUrl)) throw new RegistryError("logoUrl", "must be an https URL");
  }
  if (changes.idTokenSignedResponseAlg !== undefined && !(SIGNING_ALGS as readonly string[]).includes(changes.idTokenSignedResponseAlg))
    throw new RegistryError("idTokenSignedResponseAlg", `must be one of ${SIGNING_ALGS.join(", ")}`);
  if (changes.backchannelLogoutUri !== undefined) {
    changes.backchannelLogoutUri = changes.backchannelLogoutUri?.trim() || null;
    const problem = changes.backchannelLogoutUri && outboundUriProblem(changes.backchannelLogoutUri, rules);
    if (problem) throw new RegistryError("backchannelLogoutUri", `back-channel logout URI ${problem}`);
  }
  return store.clients.update(await existingClient(store, clientId), changes, ({ secretHash }) => {
    // Only a client that authenticates with a secret may get admin tokens (RFC 6749 4.4: confidential clients).
    if (changes.managementApi && secretHash === null)
      throw new RegistryError("managementApi", "only a confidential client (with a secret) may use the management API");
  });
}

/**
 * Sets how the client authenticates (RFC 7591 token_endpoint_auth_method): `private_key_jwt`, with
 * client assertions (RFC 7523) signed by a key of its JWK Set, given inline (`jwks`) or as a
 * `jwksUri` Keyfob fetches (checked as a back-channel logout URI is: only an admin registers it),
 * or for a license by its signers (then no keys are needed); `client_secret_jwt`, assertions MACed
 * with its secret (HS256), which works once the secret is rotated after this (only then is it kept,
 * encrypted); or null: its secret when it has one, else none. A client with a method uses nothing else.
 */
export async function setClientAuthentication(
  store: Store,
  clientId: string,
  {
    tokenEndpointAuthMethod,
    jwks = null,
    jwksUri = null,
  }: { tokenEndpointAuthMethod: string | null; jwks?: unknown; jwksUri?: string | null },
  rules?: BackchannelLogoutRules,
): Promise<void> {
  const id = await existingClient(store, clientId);
  if (tokenEndpointAuthMethod !== null && tokenEndpointAuthMethod !== PRIVATE_KEY_JWT && tokenEndpointAuthMethod !== CLIENT_SECRET_JWT)
    throw new RegistryError(
      "tokenEndpointAuthMethod",
      `must be ${PRIVATE_KEY_JWT} or ${CLIENT_SECRET_JWT}, or none set (the client's secret, if it has one)`,
    );
  if (tokenEndpointAuthMethod !== PRIVATE_KEY_JWT && (jwks !== null || jwksUri !== null))
    throw new RegistryError("jwks", `keys are for ${PRIVATE_KEY_JWT} only`);
  if (jwks !== null && jwksUri !== null)
    throw new RegistryError("jwks", "give jwks or jwks_uri, not both (OIDC Dynamic Client Registration 2)");
  const problem = jwks !== null ? jwksProblem(jwks) : undefined;
  if (problem) throw new RegistryError("jwks", `jwks ${problem}`);
  const uriProblem = jwksUri !== null ? outboundUriProblem(jwksUri, rules) : undefined;
  if (uriProblem) throw new RegistryError("jwksUri", `jwks_uri ${uriProblem}`);
  if (tokenEndpointAuthMethod === PRIVATE_KEY_JWT && jwks === null && jwksUri === null && !isLicense(id))
    throw new RegistryError("jwks", `a ${PRIVATE_KEY_JWT} client needs jwks or a jwks_uri (only a license's signers sign without them)`);
  await store.clients.setAuthentication(id, { tokenEndpointAuthMethod, jwks, jwksUri });
}

/** Lets browser pages on `origin` call the token endpoints for the client (CORS), besides its redirect URIs' origins. */
export async function addAllowedOrigin(store: Store, clientId: string, origin: string) {
  const problem = originProblem(origin);
  if (problem) throw new RegistryError("origin", `origin ${problem}`);
  return store.clients.addAllowedOrigin(await existingClient(store, clientId), origin);
}

export async function removeAllowedOrigin(store: Store, clientId: string, origin: string) {
  if (!(await store.clients.removeAllowedOrigin(normalizeClientId(clientId), origin)))
    throw new RegistryError("origin", "this origin is not allowed for the client");
}

export async function addRedirectUri(store: Store, clientId: string, uri: string) {
  const problem = redirectUriProblem(uri);
  if (problem) throw new RegistryError("uri", `redirect URI ${problem}`);
  return store.clients.addRedirectUri(await existingClient(store, clientId), uri);
}

export async function removeRedirectUri(store: Store, clientId: string, uri: string) {
  if (!(await store.clients.removeRedirectUri(normalizeClientId(clientId), uri)))
    throw new RegistryError("uri", "this redirect URI is not registered for the client");
}

/** Registers where the client may send the browser after logout (RP-Initiated Logout), matched exactly like redirect URIs. */
export async function addPostLogoutRedirectUri(store: Store, clientId: string, uri: string) {
  const problem = redirectUriProblem(uri);
  if (problem) throw new RegistryError("uri", `post-logout redirect URI ${problem}`);
  return store.clients.addPostLogoutRedirectUri(await existingClient(store, clientId), uri);
}

export async function removePostLogoutRedirectUri(store: Store, clientId: string, uri: string) {
  if (!(await store.clients.removePostLogoutRedirectUri(normalizeClientId(clientId), uri))) {
    throw new RegistryError("uri", "this post-logout redirect URI is not registered for the client");
  }
}

/**
 * Enables a signer for the client; adding a revoked or expired signer again enables it anew. Only
 * a license has signers: Flow A asks for a challenge with `address` = client id, so a signer of any
 * other client could never sign one.
 */
export async function addSigner({ store, clock }: Pick<Keyfob, "store" | "clock">, clientId: string, address: string, expiresAt?: Date) {
  const signer = parseAddress(address);
  const now = clock.now();
  if (expiresAt && expiresAt <= now) throw new RegistryError("expiresAt", "must be in the future");
  const id = await existingClient(store, clientId);
  if (!isLicense(id))
    throw new RegistryError(
      "clientId",
      `signers are only for clients whose id is a license address (0x…); ${id} is not, so Flow A can never ask a signer to sign for it`,
    );
  return store.clients.enableSigner(id, signer, expiresAt ?? null, now);
}

export async function revokeSigner({ store, clock }: Pick<Keyfob, "store" | "clock">, clientId: string, address: string) {
  if (!(await store.clients.revokeSigner(normalizeClientId(clientId), parseAddress(address), clock.now()))) {
    throw new RegistryError("address", "no active signer with this address for the client", "not_found");
  }
}

async function existingClient(store: Store, clientId: string): Promise<string> {
  const id = normalizeClientId(clientId);
  if (!(await store.clients.find(id))) throw new RegistryError("clientId", `no client with id ${id}`, "not_found");
  return id;
}
