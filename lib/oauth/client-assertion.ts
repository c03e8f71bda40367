/**
 * Client assertions (RFC 7523 2.2 and 3, OIDC Core 9 private_key_jwt and client_secret_jwt): a JWT
 * the client signs with a key Keyfob knows, sent as `client_assertion` with `client_assertion_type`
 * urn:ietf:params:oauth:client-assertion-type:jwt-bearer instead of a secret.
 *
 * client_secret_jwt: HS256 keyed with the client's secret itself, which Keyfob keeps encrypted for
 * these clients only (docs/decisions/2026-11-28-client-secret-jwt-secret-sealed.md).
 *
 * The key is one of the client's registered public keys (its JWK Set, inline or from its jwks_uri:
 * lib/oauth/client-jwks.ts), or, for a license (its id is an address), one of its enabled Flow A
 * signers, checked in the database on every assertion so that revoking a signer ends it at once:
 * - `ES256K` (RFC 8812): an ECDSA secp256k1 signature, r || s, over the SHA-256 of the JWS signing
 *   input, as any JOSE library makes it; the signer is the address recovered from it.
 * - `EIP191` (Keyfob's own): an EIP-191 personal_sign signature (65 bytes, or ERC-1271/6492
 *   bytes) of the JWS signing input as text, verified as Flow A verifies a SIWE message: by one of the
 *   license's signers, or by the license's contract account (ERC-1271) on the RPC_URL providers.
 *
 * Claims: iss = sub = the client id; aud the issuer (RFC 7523bis), or the token endpoint or the
 * endpoint it is presented at (RFC 7523 3); exp required, at most ASSERTION_MAX_LIFETIME ahead;
 * iat and nbf, when present, not in the future; jti required and used once across instances
 * (client_assertions, until exp).
 */
import { createHash } from "node:crypto";
import { base64url, compactVerify, decodeJwt, decodeProtectedHeader, errors, type JWTPayload } from "jose";
import { type Address, bytesToHex, type Hex, recoverAddress } from "viem";
import { claimedClientId, isLicense, normalizeClientId } from "../clients/client-id";
import type { Store } from "../store";
import type { ClientAuthentication } from "../store/contract";
import { verifySignature, type SignatureKind, type SignatureVerifiers } from "../siwe/signature";
import { deriveKey } from "../keys/derive";
import { seal, unseal } from "../keys/encryption";
import { clientKeys, type ClientKeysOptions } from "./client-jwks";
import { invalidClient, OAuthError } from "./errors";

export const CLIENT_ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";

/** The registered methods (RFC 7591 token_endpoint_auth_method) of clients that authenticate with client assertions. */
export const PRIVATE_KEY_JWT = "private_key_jwt";
export const CLIENT_SECRET_JWT = "client_secret_jwt";

/** Algorithms of the keys in a client's JWK Set. */
export const JWKS_ASSERTION_ALGS = ["RS256", "PS256", "ES256", "EdDSA"];
/** Algorithms of a license's signers (see above). */
export const SIGNER_ASSERTION_ALGS = ["ES256K", "EIP191"];
/** client_secret_jwt's algorithm. */
const SECRET_ASSERTION_ALG = "HS256";
/** Every algorithm a client assertion may use (discovery's *_endpoint_auth_signing_alg_values_supported). */
export const ASSERTION_SIGNING_ALGS = [...JWKS_ASSERTION_ALGS, ...SIGNER_ASSERTION_ALGS, SECRET_ASSERTION_ALG];

/** How far ahead an assertion's exp may be: it is short-lived (RFC 7523 3), and its jti is kept until then. */
export const ASSERTION_MAX_LIFETIME_S = 300;
/** Clocks of client and server differ a little. */
const CLOCK_SKEW_S = 30;

/** What checking an assertion needs of the instance. */
export type AssertionVerifier = {
  issuer: string;
  store: Store;
  signatures: SignatureVerifiers;
  jwks: ClientKeysOptions;
  /** Opens client_secret_jwt clients' sealed secrets (clientSecretKey). */
  secretKey: Uint8Array;
};

/**
 * How a license's assertion was signed, as Flow A names its signatures: by one of its signers
 * (`signer`, the key), by the license's own key (`wallet`), or by its contract account (`contract`,
 * ERC-1271). What its client_credentials token is issued for (lib/actions/client-credentials.ts).
 */
export type LicenseSignature = { kind: SignatureKind; signer?: Address };

/** The key client_secret_jwt clients' secrets are sealed with, from KEYFOB_SECRET. */
export const clientSecretKey = (keyfobSecret: string) => deriveKey(keyfobSecret, "client-secret-encryption");

/** A client_secret_jwt client's secret, sealed for the database (A256GCM, bound to the client's id). */
export const sealClientSecret = (secret: string, clientId: string, keyfobSecret: string) =>
  seal(secret, clientId, clientSecretKey(keyfobSecret));

/** The client an assertion names as its issuer, unverified (to find the client when no client_id is sent). */
export function assertionIssuer(assertion: string): string | undefined {
  try {
    const { iss } = decodeJwt(assertion);
    // Only what can be a client id is looked up (PostgreSQL refuses NUL in text).
    return claimedClientId(typeof iss === "string" ? iss : undefined);
  } catch {
    return undefined;
  }
}

/**
 * Verifies `assertion` for `client`, presented at `endpoint` (its URL), and records its jti; throws
 * invalid_client saying what was wrong (never the assertion), or temporarily_unavailable when a
 * chain or a jwks_uri could not answer. A license's assertion signed by a signer (or the license)
 * answers how it was signed; any other, nothing.
 */
export async function verifyClientAssertion(
  assertion: string,
  client: { id: string } & ClientAuthentication,
  endpoint: string,
  verifier: AssertionVerifier,
  now: Date,
): Promise<LicenseSignature | undefined> {
  let alg: string | undefined;
  try {
    alg = decodeProtectedHeader(assertion).alg;
  } catch {
    throw assertionRefused("it is not a JWS");
  }
  let signature: LicenseSignature | undefined;
  let payload: Uint8Array;
  if (client.tokenEndpointAuthMethod === CLIENT_SECRET_JWT) payload = await macedWithSecret(assertion, client, verifier);
  else if (SIGNER_ASSERTION_ALGS.includes(alg ?? ""))
    ({ payload, signature } = await signedBySigner(assertion, alg as "ES256K" | "EIP191", client.id, verifier, now));
  else payload = await signedByKey(assertion, client, verifier);
  const claims = checkedClaims(payload, client.id, [verifier.issuer, `${verifier.issuer}/token`, endpoint], now);
  const jtiHash = createHash("sha256").update(`${client.id}\n${claims.jti}`).digest("base64url");
  if (!(await verifier.store.clientAssertions.record(jtiHash, new Date(claims.exp * 1000))))
    throw assertionRefused("its jti was used before (an assertion is single use)");
  return signature;
}

const assertionRefused = (problem: string) => invalidClient(`client authentication failed: the client_assertion is refused: ${problem}`);

/** The payload of a client_secret_jwt assertion: HS256 with the client's secret. */
async function macedWithSecret(
  assertion: string,
  client: { id: string; secretSealed: string | null },
  { secretKey }: AssertionVerifier,
): Promise<Uint8Array> {
  // Sealed when the secret is generated for a client_secret_jwt client: one from before has none.
  if (!client.secretSealed) throw assertionRefused("the client's secret was set before it was registered for client_secret_jwt: rotate it");
  const secret = new TextEncoder().encode(await unseal(client.secretSealed, client.id, secretKey));
  try {
    return (await compactVerify(assertion, secret, { algorithms: [SECRET_ASSERTION_ALG] })).payload;
  } catch (error) {
    if (error instanceof errors.JOSEAlgNotAllowed) throw assertionRefused(`a client_secret_jwt assertion is ${SECRET_ASSERTION_ALG}`);
    throw assertionRefused("its MAC does not verify with the client's secret");
  }
}

/** The payload of an assertion signed by a key of the client's JWK Set. */
async function signedByKey(
  assertion: string,
  client: { id: string } & Pick<ClientAuthentication, "jwks" | "jwksUri">,
  verifier: AssertionVerifier,
): Promise<Uint8Array> {
  const keys = clientKeys(client, verifier.jwks);
  if (!keys) throw assertionRefused("the client has no registered keys (jwks or jwks_uri)");
  try {
    return (await compactVerify(assertion, keys, { algorithms: JWKS_ASSERTION_ALGS })).payload;
  } catch (error) {
    if (error instanceof OAuthError) throw error;
    if (error instanceof errors.JOSEAlgNotAllowed) throw assertionRefused(`alg must be one of ${ASSERTION_SIGNING_ALGS.join(", ")}`);
    if (error instanceof errors.JWKSNoMatchingKey) throw assertionRefused("no registered key matches its header (kid, alg)");
    // A jwks_uri that did not answer in time or at all: not the client's fault as far as Keyfob knows.
    if (!client.jwks && (error instanceof errors.JWKSTimeout || !(error instanceof errors.JOSEError)))
      throw new OAuthError("temporarily_unavailable", "the client's jwks_uri could not be read");
    throw assertionRefused("its signature does not verify with the client's keys");
  }
}

/** The payload of a license's assertion signed by one of its enabled signers (or by it, EIP191), and how it was signed. */
async function signedBySigner(
  assertion: string,
  alg: "ES256K" | "EIP191",
  clientId: string,
  { store, signatures }: AssertionVerifier,
  now: Date,
): Promise<{ payload: Uint8Array; signature: LicenseSignature }> {
  if (!isLicense(clientId)) throw assertionRefused(`${alg} is for licenses, whose id is an address, signed by their signers`);
  const parts = assertion.split(".");
  if (parts.length !== 3) throw assertionRefused("it is not a compact JWS");
  const signingInput = `${parts[0]}.${parts[1]}`;
  let signature: Uint8Array;
  try {
    signature = base64url.decode(parts[2]);
  } catch {
    throw assertionRefused("its signature is not base64url");
  }
  const isSigner = async (address: Address) => {
    const signer = await store.clients.findSigner(clientId, address);
    return signer !== undefined && signer.revokedAt === null && (signer.expiresAt === null || signer.expiresAt > now);
  };
  if (alg === "ES256K") {
    if (signature.length !== 64) throw assertionRefused("an ES256K signature is 64 bytes, r || s (RFC 8812)");
    const hash = bytesToHex(createHash("sha256").update(signingInput).digest());
    const r = bytesToHex(signature.slice(0, 32));
    const s = bytesToHex(signature.slice(32));
    // A JWS signature carries no recovery bit: either key may have signed.
    for (const yParity of [0, 1]) {
      const address = await recoverAddress({ hash, signature: { r, s, yParity } }).catch(() => undefined);
      if (address && (await isSigner(address)))
        return { payload: base64url.decode(parts[1]), signature: { kind: "signer", signer: address } };
    }
    throw assertionRefused("it is not signed by an enabled signer of the license");
  }
  // The signer verifySignature accepted, if it was one.
  let signer: Address | undefined;
  const isRecoveredSigner = async (address: Address) => {
    const enabled = await isSigner(address);
    if (enabled) signer = address;
    return enabled;
  };
  let kind: SignatureKind;
  try {
    kind = await verifySignature(
      {
        message: signingInput,
        address: clientId as Address,
        signature: bytesToHex(signature) as Hex,
        client: { id: clientId, isSigner: isRecoveredSigner },
      },
      signatures,
    );
  } catch (error) {
    if (error instanceof OAuthError && error.code === "temporarily_unavailable") throw error;
    throw assertionRefused("it is not signed by an enabled signer of the license nor by its contract account");
  }
  return { payload: base64url.decode(parts[1]), signature: kind === "signer" ? { kind, signer } : { kind } };
}

/** The claims RFC 7523 3 requires, checked; exp and jti as they were. */
function checkedClaims(payload: Uint8Array, clientId: string, audiences: string[], now: Date): JWTPayload & { exp: number; jti: string } {
  let claims: JWTPayload;
  try {
    claims = JSON.parse(new TextDecoder().decode(payload)) as JWTPayload;
  } catch {
    throw assertionRefused("its payload is not JSON");
  }
  if (typeof claims !== "object" || claims === null) throw assertionRefused("its payload is not a JSON object");
  const seconds = Math.floor(now.getTime() / 1000);
  const names = (claim: unknown) => typeof claim === "string" && normalizeClientId(claim) === clientId;
  if (!names(claims.iss) || !names(claims.sub)) throw assertionRefused("iss and sub must both be the client_id");
  const aud = Array.isArray(claims.aud) ? claims.aud : [claims.aud];
  if (!aud.some((a) => typeof a === "string" && audiences.includes(a))) throw assertionRefused(`aud must be the issuer, ${audiences[0]}`);
  if (typeof claims.exp !== "number") throw assertionRefused("exp is required");
  if (claims.exp <= seconds - CLOCK_SKEW_S) throw assertionRefused("it has expired");
  if (claims.exp > seconds + ASSERTION_MAX_LIFETIME_S + CLOCK_SKEW_S)
    throw assertionRefused(`exp may be at most ${ASSERTION_MAX_LIFETIME_S} seconds ahead`);
  for (const name of ["iat", "nbf"] as const) {
    const value = claims[name];
    if (value !== undefined && (typeof value !== "number" || value > seconds + CLOCK_SKEW_S))
      throw assertionRefused(`${name} is in the future`);
  }
  if (typeof claims.jti !== "string" || claims.jti.length === 0 || claims.jti.length > 256)
    throw assertionRefused("jti is required (1 to 256 characters)");
  return claims as JWTPayload & { exp: number; jti: string };
}
