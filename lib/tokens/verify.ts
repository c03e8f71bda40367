import { decodeProtectedHeader, errors, jwtVerify, type JWTHeaderParameters, type JWTPayload } from "jose";
import type { Keyfob } from "../keyfob";
import { SIGNING_ALGS, type KeyStore } from "../keys/keystore";
import { checkDPoPProof, DPOP_SIGNING_ALGS, invalidProof } from "../oauth/dpop";
import { invalidRequest, OAuthError } from "../oauth/errors";
import { hasControlCharacter } from "../oauth/params";
import type { HttpRequest } from "../http/request";

const invalidToken = (description: string) => new OAuthError("invalid_token", description);

/** The keys and issuer a kind of token is signed and issued with: access tokens', or vehicle tokens' (lib/vehicles). */
export type TokenKeySet = { keys: KeyStore; issuer: string };

export type ActiveToken = {
  payload: JWTPayload & { jti: string; sub: string; scope?: string; cnf?: { jkt?: string } };
  clientId: string;
};

/**
 * Checks an access token: signed by one of our published keys, issued by us, unexpired, recorded
 * as issued and not revoked, and its signing key not revoked. ID tokens are not recorded and so
 * never pass.
 *
 * The key is the one named by the token's `kid`, which the signature was verified with (the key
 * set selects keys by kid, and our tokens always carry one). It is checked in the query that
 * reads the token's row, so a revoked key's tokens are refused from the next request on every
 * instance, whether or not its cache has dropped the key yet, at no extra round trip.
 */
export async function verifyAccessToken(
  { config, store, keys, clock }: Pick<Keyfob, "config" | "clock" | "store" | "keys">,
  token: string,
  signedBy: TokenKeySet = { keys, issuer: config.issuerUrl },
): Promise<ActiveToken> {
  const { payload, protectedHeader } = await verifySignature(signedBy.keys, signedBy.issuer, token);
  if (typeof payload.jti !== "string" || typeof payload.sub !== "string" || typeof protectedHeader.kid !== "string") {
    throw invalidToken("the access token is invalid");
  }
  const record = await store.tokens.check(payload.jti, protectedHeader.kid, clock.now());
  if (!record?.active) throw invalidToken("the access token has been revoked or has expired");
  if (!record.keyValid) throw invalidToken("the key that signed the access token has been revoked");
  return { payload: payload as ActiveToken["payload"], clientId: record.clientId };
}

/**
 * The signature check against the cached keys. A kid the cache does not know may be a key created
 * on another instance moments ago (an emergency revocation's replacement) whose announcement has
 * not arrived: the keys are then reloaded, at most once per period whatever the tokens say, and
 * the check is tried once more. The keys failing to load is not the token's fault (503).
 */
async function verifySignature(
  keys: KeyStore,
  issuer: string,
  token: string,
): Promise<{ payload: JWTPayload; protectedHeader: JWTHeaderParameters }> {
  // Each published key is bound to one alg (its JWK's), which jose holds the token's header to.
  const options = { issuer, algorithms: [...SIGNING_ALGS] };
  const refused = () => invalidToken("the access token is invalid or has expired");
  const known = await keys.verificationKeys();
  try {
    return await jwtVerify(token, known, options);
  } catch (error) {
    if (!(error instanceof errors.JWKSNoMatchingKey)) throw refused();
    const kid = headerKid(token);
    if (kid === undefined || !(await keys.reloadForUnknownKey(kid))) throw refused();
    return jwtVerify(token, await keys.verificationKeys(), options).catch(() => {
      throw refused();
    });
  }
}

function headerKid(token: string): string | undefined {
  try {
    const { kid } = decodeProtectedHeader(token);
    return typeof kid === "string" ? kid : undefined;
  } catch {
    return undefined;
  }
}

/** How a request presents its access token: `Bearer` (RFC 6750 2) or `DPoP`, with a proof (RFC 9449 7.1). */
export type Presented = { token: string; scheme: "Bearer" | "DPoP" };

/**
 * The challenge to a request that sent no credentials at all: both schemes a token may come by,
 * DPoP with the proof algorithms (RFC 9449 7.2), and no error code, as the request had nothing
 * wrong to report (RFC 6750 3.1).
 */
const NO_CREDENTIALS_CHALLENGE = `Bearer realm="keyfob", DPoP realm="keyfob", algs="${DPOP_SIGNING_ALGS.join(" ")}"`;

/** The access token of a request's `Authorization` header: `Bearer` (RFC 6750 2.1) or `DPoP` (RFC 9449 7.1). */
export function presentedToken(request: HttpRequest): Presented {
  const header = request.headers.get("authorization");
  if (header === null) {
    const missing = new OAuthError("invalid_token", "an access token is required: Authorization: Bearer <token>");
    missing.challenge = NO_CREDENTIALS_CHALLENGE;
    throw missing;
  }
  // A malformed request (RFC 6750 3.1), refused like a control character in any parameter.
  if (header && hasControlCharacter(header)) throw invalidRequest("the Authorization header contains a control character");
  const match = header && /^(Bearer|DPoP)\s+([A-Za-z0-9\-._~+/]+=*)$/i.exec(header.trim());
  if (!match) throw new OAuthError("invalid_token", "an access token is required: Authorization: Bearer <token>");
  return { token: match[2], scheme: match[1].toLowerCase() === "dpop" ? "DPoP" : "Bearer" };
}

/**
 * Checks the access token a request presents to the resource endpoint at `htu`, and its binding
 * (RFC 9449 7): a token bound to a DPoP key (`cnf.jkt`) must come as `Authorization: DPoP` with a
 * proof of that key for this request and this token (`ath`); as Bearer it is refused, so a stolen
 * one is worthless. An unbound token comes as Bearer. A refusal is a 401 whose WWW-Authenticate
 * challenge names the scheme the token needs.
 */
export async function verifyPresentedToken(
  keyfob: Pick<Keyfob, "config" | "clock" | "store" | "keys" | "macKeys">,
  request: HttpRequest,
  presented: Presented,
  htu: string,
): Promise<ActiveToken> {
  let bound = presented.scheme === "DPoP";
  try {
    const active = await verifyAccessToken(keyfob, presented.token);
    const jkt = active.payload.cnf?.jkt;
    bound = jkt !== undefined;
    if (bound && presented.scheme !== "DPoP")
      throw invalidToken("this access token is bound to a DPoP key: send it as Authorization: DPoP with a DPoP proof");
    if (!bound && presented.scheme === "DPoP") throw invalidToken("this access token is not bound to a DPoP key: send it as Bearer");
    if (!bound) return active;
    const proof = await checkDPoPProof(keyfob, request, htu, presented.token);
    if (!proof) throw invalidProof("a DPoP proof is required with a DPoP-bound access token", 401);
    if (proof.jkt !== jkt) throw invalidProof("the DPoP proof is not signed by the key the access token is bound to", 401);
    return active;
  } catch (error) {
    if (error instanceof OAuthError && error.status === 401 && bound)
      error.challenge = `DPoP error="${error.code}", error_description="${error.message}", algs="${DPOP_SIGNING_ALGS.join(" ")}"`;
    throw error;
  }
}
