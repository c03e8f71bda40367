import { decodeJwt } from "jose";
import type { Keyfob } from "../keyfob";
import { authenticateClient } from "../oauth/client-auth";
import { required, type Params } from "../oauth/params";

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
  if (typeof jti === "string") {
    await db.issuedToken.updateMany({ where: { jti, clientId: client.id, revokedAt: null }, data: { revokedAt: new Date() } });
  }
  return {};
}
