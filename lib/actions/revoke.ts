import { decodeJwt } from "jose";
import type { Keyfob } from "../keyfob";
import { authenticateClient } from "../oauth/client-auth";
import { hasControlCharacter, required, type Params } from "../oauth/params";

/**
 * Token revocation (RFC 7009, `POST /token/revoke`): the authenticated client revokes one of its
 * access tokens. Unknown, malformed and other clients' tokens get the same empty 200, so the
 * endpoint tells nothing about tokens the caller does not own.
 */
export async function revokeToken({ db }: Keyfob, request: Request, params: Params): Promise<Record<string, never>> {
  const client = await authenticateClient(db, request, params);
  const token = required(params, "token");
  let jti: unknown;
  try {
    jti = decodeJwt(token).jti;
  } catch {
    return {};
  }
  // The token is not verified here, so its jti may hold anything. One with a control character or a
  // lone surrogate was never issued, and would fail the query (PostgreSQL refuses NUL, Prisma
  // unpaired surrogates): a 500 instead of the empty 200.
  if (typeof jti === "string" && jti.isWellFormed() && !hasControlCharacter(jti)) {
    await db.issuedToken.updateMany({ where: { jti, clientId: client.id, revokedAt: null }, data: { revokedAt: new Date() } });
  }
  return {};
}
