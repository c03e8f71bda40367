/**
 * A client's public keys for private_key_jwt (lib/oauth/client-assertion.ts): its JWK Set as
 * registered inline, or fetched from its jwks_uri. Only an admin registers a jwks_uri (https, on a
 * host Keyfob may reach: lib/http/outbound.ts, the back-channel logout rules), so the server never
 * sends a request to an address a stranger chose. Each instance keeps a jwks_uri's set for
 * JWKS_CACHE_MAX_AGE_MS and fetches it again when an assertion names a kid it does not hold (a key
 * rotation), at most once per JWKS_REFETCH_COOLDOWN_MS; a fetch is bounded in time and size.
 */
import { createLocalJWKSet, createRemoteJWKSet, customFetch, type JSONWebKeySet, type JWTVerifyGetKey } from "jose";
import type { ClientAuthentication } from "../store/contract";
import { getVetted, type Network, type Resolver } from "../http/outbound";

const JWKS_CACHE_MAX_AGE_MS = 10 * 60_000;
const JWKS_REFETCH_COOLDOWN_MS = 30_000;
const JWKS_TIMEOUT_MS = 5_000;
const JWKS_MAX_BYTES = 64 * 1024;
/** Sets cached per instance; past this many the cache starts anew. */
const MAX_CACHED_SETS = 1_000;

export type ClientKeysOptions = { allowed: readonly Network[]; resolve?: Resolver };

const remoteSets = new Map<string, JWTVerifyGetKey>();

/** The client's keys as jose's key resolver, or undefined when it registered none. */
export function clientKeys(
  client: Pick<ClientAuthentication, "jwks" | "jwksUri">,
  options: ClientKeysOptions,
): JWTVerifyGetKey | undefined {
  if (client.jwks) return createLocalJWKSet(client.jwks as JSONWebKeySet);
  if (!client.jwksUri) return undefined;
  let keys = remoteSets.get(client.jwksUri);
  if (!keys) {
    if (remoteSets.size >= MAX_CACHED_SETS) remoteSets.clear();
    keys = createRemoteJWKSet(new URL(client.jwksUri), {
      timeoutDuration: JWKS_TIMEOUT_MS,
      cooldownDuration: JWKS_REFETCH_COOLDOWN_MS,
      cacheMaxAge: JWKS_CACHE_MAX_AGE_MS,
      [customFetch]: (url, { signal }) => getVetted(url, { ...options, signal, maxBytes: JWKS_MAX_BYTES }),
    });
    remoteSets.set(client.jwksUri, keys);
  }
  return keys;
}

/** The members each key type's public key needs (RFC 7518 6, RFC 8037 2). */
const PUBLIC_MEMBERS: Record<string, string[]> = { RSA: ["n", "e"], EC: ["crv", "x", "y"], OKP: ["crv", "x"] };

/** Why a JWK Set cannot be registered, or undefined: 1 to 20 public RSA, EC or OKP keys. */
export function jwksProblem(jwks: unknown): string | undefined {
  const keys = (jwks as { keys?: unknown } | null)?.keys;
  if (!Array.isArray(keys) || keys.length === 0 || keys.length > 20) return "must be a JWK Set with 1 to 20 keys";
  for (const key of keys as Record<string, unknown>[]) {
    const members = PUBLIC_MEMBERS[String(key?.kty)];
    if (!members) return "must hold RSA, EC or OKP keys";
    if ("d" in key) return "must hold public keys only";
    if (members.some((member) => typeof key[member] !== "string")) return `has a ${key.kty} key without ${members.join(", ")}`;
  }
  return undefined;
}
