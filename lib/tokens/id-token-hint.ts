import { decodeProtectedHeader, errors, jwtVerify, type JWTPayload } from "jose";
import type { Keyfob } from "../keyfob";
import { SIGNING_ALGS } from "../keys/keystore";
import { invalidRequest } from "../oauth/errors";
import { decodeSubject } from "./sub";

/**
 * An `id_token_hint` (OpenID Connect Core 3.1.2.1, RP-Initiated Logout 2): an ID token Keyfob
 * issued, checked against its published keys; expired ones are accepted, since the hint names who
 * logged in, not a live credential. Keyfob signs access and logout tokens with the same keys, so
 * the hint must also be an ID token by its type and claims: no `typ` but JWT (access tokens are
 * `at+jwt`, logout tokens `logout+jwt`), no `scope` or `client_id` (an access token's), no `events`
 * (a logout token's), and an `at_hash` (every ID token Keyfob issues has one). Returns its client
 * (aud) and the account its sub names.
 */
export async function verifyIdTokenHint(
  { config, keys }: Pick<Keyfob, "config" | "keys">,
  hint: string,
): Promise<{ clientId: string; accountId: string }> {
  let payload: JWTPayload;
  try {
    ({ payload } = await jwtVerify(hint, await keys.verificationKeys(), { issuer: config.issuerUrl, algorithms: [...SIGNING_ALGS] }));
  } catch (error) {
    // jose checks the signature before the claims: an expired token's payload is authentic.
    if (!(error instanceof errors.JWTExpired)) throw invalidRequest("id_token_hint is not an ID token issued by this server");
    payload = error.payload;
    if (payload.iss !== config.issuerUrl) throw invalidRequest("id_token_hint is not an ID token issued by this server");
  }
  const aud = Array.isArray(payload.aud) ? payload.aud[0] : payload.aud;
  const typ = decodeProtectedHeader(hint).typ;
  const idToken =
    (typ === undefined || typ.toUpperCase() === "JWT") &&
    typeof payload.at_hash === "string" &&
    payload.scope === undefined &&
    payload.client_id === undefined &&
    payload.events === undefined;
  if (typeof aud !== "string" || typeof payload.sub !== "string" || !idToken) {
    throw invalidRequest("id_token_hint is not an ID token issued by this server");
  }
  let accountId: string;
  try {
    accountId = decodeSubject(payload.sub).userId;
  } catch {
    throw invalidRequest("id_token_hint is not an ID token issued by this server");
  }
  return { clientId: aud, accountId };
}
