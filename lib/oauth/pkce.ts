import { createHash, timingSafeEqual } from "node:crypto";
import { invalidGrant, invalidRequest } from "./errors";

/** An S256 code challenge is the base64url SHA-256 of the verifier: 43 characters. */
const CHALLENGE = /^[A-Za-z0-9_-]{43}$/;
/** RFC 7636 4.1: 43 to 128 unreserved characters. */
const VERIFIER = /^[A-Za-z0-9._~-]{43,128}$/;

/** Validates a PKCE request (S256 only; plain is refused) and returns the challenge, if any. */
export function parseCodeChallenge(challenge: string | undefined, method: string | undefined): string | undefined {
  if (challenge === undefined) {
    if (method !== undefined) throw invalidRequest("code_challenge_method without code_challenge");
    return undefined;
  }
  if (method !== "S256") throw invalidRequest("code_challenge_method must be S256");
  if (!CHALLENGE.test(challenge)) throw invalidRequest("code_challenge must be a base64url SHA-256 (43 characters)");
  return challenge;
}

/**
 * What a code's challenge must be for the request's code_verifier (RFC 7636 4.6): null without one,
 * the S256 of a well-formed one, and for a malformed one a value that no challenge is.
 */
export function expectedCodeChallenge(verifier: string | undefined): string | null {
  if (verifier === undefined) return null;
  return VERIFIER.test(verifier) ? createHash("sha256").update(verifier).digest("base64url") : "";
}

/** Checks the verifier against the challenge the code was issued with (RFC 7636 4.6). */
export function verifyCodeVerifier(challenge: string | null, verifier: string | undefined): void {
  if (challenge === null) {
    if (verifier !== undefined) throw invalidGrant("code_verifier sent, but the authorization request had no code_challenge");
    return;
  }
  if (verifier === undefined) throw invalidGrant("code_verifier is required: the authorization request had a code_challenge");
  if (!VERIFIER.test(verifier)) throw invalidGrant("code_verifier must be 43 to 128 unreserved characters");
  const computed = Buffer.from(expectedCodeChallenge(verifier) as string);
  const expected = Buffer.from(challenge);
  if (computed.length !== expected.length || !timingSafeEqual(computed, expected))
    throw invalidGrant("code_verifier does not match the code_challenge");
}
