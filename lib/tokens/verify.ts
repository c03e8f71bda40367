import { jwtVerify, type JWTPayload } from "jose";
import type { Keyfob } from "../keyfob";
import { SIGNING_ALG } from "../keys/keystore";
import { invalidRequest, OAuthError } from "../oauth/errors";
import { hasControlCharacter } from "../oauth/params";

const invalidToken = (description: string) => new OAuthError("invalid_token", description);

export type ActiveToken = { payload: JWTPayload & { jti: string; sub: string; scope?: string }; clientId: string };

/**
 * Checks an access token: signed by one of our published keys, issued by us, unexpired, and
 * recorded as issued and not revoked. ID tokens are not recorded and so never pass.
 */
export async function verifyAccessToken({ config, db, keys }: Keyfob, token: string): Promise<ActiveToken> {
  let payload: JWTPayload;
  try {
    ({ payload } = await jwtVerify(token, await keys.verificationKeys(), { issuer: config.issuerUrl, algorithms: [SIGNING_ALG] }));
  } catch {
    throw invalidToken("the access token is invalid or has expired");
  }
  if (typeof payload.jti !== "string" || typeof payload.sub !== "string") throw invalidToken("the access token is invalid");
  const record = await db.issuedToken.findUnique({ where: { jti: payload.jti }, select: { clientId: true, revokedAt: true, expiresAt: true } });
  if (!record || record.revokedAt || record.expiresAt <= new Date()) throw invalidToken("the access token has been revoked or has expired");
  return { payload: payload as ActiveToken["payload"], clientId: record.clientId };
}

/** The bearer token of a request: `Authorization: Bearer` (RFC 6750 2.1). */
export function bearerToken(request: Request): string {
  const header = request.headers.get("authorization");
  // A malformed request (RFC 6750 3.1), refused like a control character in any parameter.
  if (header && hasControlCharacter(header)) throw invalidRequest("the Authorization header contains a control character");
  const match = header && /^Bearer\s+([A-Za-z0-9\-._~+/]+=*)$/i.exec(header.trim());
  if (!match) throw new OAuthError("invalid_token", "an access token is required: Authorization: Bearer <token>");
  return match[1];
}
