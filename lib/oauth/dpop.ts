import { createHash, createHmac, timingSafeEqual } from "node:crypto";
import { calculateJwkThumbprint, EmbeddedJWK, errors, jwtVerify, type JWK, type JWTVerifyResult } from "jose";
import type { Keyfob } from "../keyfob";
import { OAuthError } from "./errors";
import type { HttpRequest } from "../http/request";

/**
 * DPoP (RFC 9449): a client proves with each request that it holds a private key, and the tokens
 * issued to it are bound to that key's thumbprint (RFC 7638), so that a stolen token is worthless
 * without the key. A proof is a JWT in the `DPoP` header, signed with the key it carries in its
 * header, naming the request's method and URL, fresh and never seen before.
 */

/** The proofs' signature algorithms: asymmetric only (RFC 9449 4.3, check 5). */
export const DPOP_SIGNING_ALGS = ["ES256", "ES384", "ES512", "EdDSA", "Ed25519", "PS256", "PS384", "PS512", "RS256", "RS384", "RS512"];

/** A proof is accepted this long after its iat, and refused as a replay for as long. */
const PROOF_MAX_AGE_SECONDS = 300;
/** Clients' clocks may run ahead of ours by this much. */
const CLOCK_SKEW_SECONDS = 60;
/** A server nonce is good for the period it was issued in and the next one. */
const NONCE_PERIOD_SECONDS = 300;
/** Longer jti values are refused rather than hashed. */
const MAX_JTI_LENGTH = 256;

/** The key a request proved it holds: its JWK SHA-256 thumbprint (the `jkt` of `cnf`, RFC 9449 6). */
export type DPoPProof = { jkt: string };

/** The refusal of a proof (RFC 9449 4.3, 7.1): 400 at the token endpoints, 401 at resource endpoints. */
export const invalidProof = (description: string, status?: number) => new OAuthError("invalid_dpop_proof", description, status);

/**
 * Refuses a token request without a proof from a client that must send one (RFC 9449 5.2,
 * dpop_bound_access_tokens: an admin's setting).
 */
export function requireProofFor(client: { dpopBoundAccessTokens?: boolean }, proof: DPoPProof | undefined): void {
  if (!proof && client.dpopBoundAccessTokens) throw invalidProof("this client must send a DPoP proof (RFC 9449) with its token requests");
}

/**
 * The server nonce of now (RFC 9449 8, 9): a MAC of the current period, with a key derived from
 * KEYFOB_SECRET, so every instance issues and accepts the same nonces without sharing state.
 */
export function dpopNonce(keyfob: Pick<Keyfob, "macKeys" | "clock">, now = keyfob.clock.now().getTime()): string {
  return nonceOf(keyfob.macKeys.dpopNonce, Math.floor(now / 1000 / NONCE_PERIOD_SECONDS));
}

function nonceOf(key: Uint8Array, period: number): string {
  return createHmac("sha256", key).update(`dpop-nonce:${period}`).digest("base64url");
}

function isCurrentNonce(key: Uint8Array, nonce: string, now: number): boolean {
  const period = Math.floor(now / 1000 / NONCE_PERIOD_SECONDS);
  const presented = Buffer.from(nonce);
  return [period, period - 1].some((p) => {
    const expected = Buffer.from(nonceOf(key, p));
    return expected.length === presented.length && timingSafeEqual(expected, presented);
  });
}

/** The URL a proof names, compared without query and fragment (RFC 9449 4.3, check 9). */
function withoutQuery(url: string): string | undefined {
  try {
    const parsed = new URL(url);
    parsed.search = "";
    parsed.hash = "";
    return parsed.href;
  } catch {
    return undefined;
  }
}

/** ath: base64url of the SHA-256 of the access token (RFC 9449 4.2). */
export const accessTokenDigest = (accessToken: string) => createHash("sha256").update(accessToken).digest("base64url");

/**
 * Checks the request's DPoP proof, if it has one, for the endpoint at `htu` (RFC 9449 4.3): one
 * DPoP header holding a JWT typed dpop+jwt, signed with an asymmetric algorithm by the public key
 * in its header, naming the request's method and `htu`, issued within the last five minutes
 * (a minute's skew allowed), with a jti; at a resource endpoint, `ath` the access token's hash;
 * a nonce, if it has one, a current server nonce, and when DPOP_NONCE_REQUIRED it must have one
 * (else use_dpop_nonce, with a fresh one in the DPoP-Nonce header the endpoint wrapper adds). The proof is then recorded in the database
 * with its key's thumbprint and its htu until it would be too old anyway: a replay is refused on
 * every instance. Undefined when the request carries no proof. With `accessToken` (a resource
 * endpoint) a refusal is a 401 (RFC 9449 7.1).
 */
export async function checkDPoPProof(
  keyfob: Pick<Keyfob, "config" | "clock" | "store" | "macKeys">,
  request: HttpRequest,
  htu: string,
  accessToken?: string,
  now = keyfob.clock.now().getTime(),
): Promise<DPoPProof | undefined> {
  const status = accessToken === undefined ? undefined : 401;
  const header = request.headers.get("dpop");
  if (header === null) return undefined;
  // Headers joins repeated headers with a comma, which a compact JWS never holds.
  if (header.includes(",")) throw invalidProof("a request must carry one DPoP proof", status);
  let verified: JWTVerifyResult;
  try {
    verified = await jwtVerify(header, EmbeddedJWK, { typ: "dpop+jwt", algorithms: DPOP_SIGNING_ALGS, currentDate: new Date(now) });
  } catch (error) {
    const detail = error instanceof errors.JOSEError ? `: ${error.message}` : "";
    throw invalidProof(`the DPoP proof is not a valid dpop+jwt signed by the key in its header${detail}`, status);
  }
  const { payload, protectedHeader } = verified;
  const { jti, htm, iat, ath, nonce } = payload;
  if (typeof jti !== "string" || jti.length === 0 || jti.length > MAX_JTI_LENGTH) throw invalidProof("the DPoP proof needs a jti", status);
  if (htm !== request.method) throw invalidProof("the DPoP proof's htm is not the request's method", status);
  if (typeof payload.htu !== "string" || withoutQuery(payload.htu) !== withoutQuery(htu))
    throw invalidProof(`the DPoP proof's htu is not ${htu}`, status);
  const seconds = Math.floor(now / 1000);
  if (typeof iat !== "number" || iat > seconds + CLOCK_SKEW_SECONDS || iat < seconds - PROOF_MAX_AGE_SECONDS)
    throw invalidProof("the DPoP proof's iat is not within the last five minutes", status);
  if (accessToken !== undefined && ath !== accessTokenDigest(accessToken))
    throw invalidProof("the DPoP proof's ath is not the hash of the access token", status);
  // A nonce is checked whenever a proof carries one, required or not: one this server did not
  // issue, or one that has expired, is refused (RFC 9449 8, 9).
  if (nonce !== undefined && (typeof nonce !== "string" || !isCurrentNonce(keyfob.macKeys.dpopNonce, nonce, now)))
    throw new OAuthError("use_dpop_nonce", "the DPoP proof's nonce is not a current one: use the DPoP-Nonce header's value", status);
  if (nonce === undefined && keyfob.config.dpopNonceRequired)
    throw new OAuthError("use_dpop_nonce", "the DPoP proof must carry the server's nonce: use the DPoP-Nonce header's value", status);

  const jkt = await calculateJwkThumbprint(protectedHeader.jwk as JWK, "sha256");
  const proofHash = createHash("sha256")
    .update(`${jkt} ${withoutQuery(htu)} ${jti}`)
    .digest("base64url");
  if (!(await keyfob.store.dpopProofs.record(proofHash, new Date((iat + PROOF_MAX_AGE_SECONDS) * 1000))))
    throw invalidProof("the DPoP proof has already been used", status);
  return { jkt };
}
