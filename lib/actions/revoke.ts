import { decodeJwt } from "jose";
import type { Keyfob } from "../keyfob";
import type { Store } from "../store";
import { isOpaque, opaqueDigest } from "../oauth/opaque";
import { hasControlCharacter, required } from "../oauth/params";
import type { ProtocolRequest } from "../http/request";

/**
 * Token revocation (RFC 7009, `POST /token/revoke`): the authenticated client revokes one of its
 * access tokens, or one of its refresh tokens, which revokes the token's whole family and every
 * access token issued with it (RFC 7009 2.1). `token_type_hint` (access_token or refresh_token)
 * only says which kind to try first: both are tried. Revoking an access token leaves its refresh
 * token alone. Unknown, malformed and other clients' tokens get the same empty 200, so the
 * endpoint tells nothing about tokens the caller does not own.
 */
export async function revokeToken(
  { store, clock }: Pick<Keyfob, "store" | "clock">,
  request: ProtocolRequest,
): Promise<Record<string, never>> {
  const { params } = request;
  const client = await request.client();
  const token = required(params, "token");
  const kinds = [revokeAccessToken, revokeRefreshToken];
  if (params.get("token_type_hint") === "refresh_token") kinds.reverse();
  for (const revoke of kinds) {
    if (await revoke(store, client.id, token, clock.now())) break;
  }
  return {};
}

/** Revokes an access token of the client; false when the value is not a JWT (our refresh tokens never are). */
async function revokeAccessToken(store: Store, clientId: string, token: string, now: Date): Promise<boolean> {
  let jti: unknown;
  try {
    jti = decodeJwt(token).jti;
  } catch {
    return false;
  }
  // The token is not verified here, so its jti may hold anything. One with a control character or a
  // lone surrogate was never issued, and would fail the query (PostgreSQL refuses NUL, Prisma
  // unpaired surrogates): a 500 instead of the empty 200.
  if (typeof jti !== "string" || !jti.isWellFormed() || hasControlCharacter(jti)) return false;
  await store.tokens.revoke(jti, now, clientId);
  return true;
}

/** Revokes the family of a refresh token of the client; false when the value is not one of its refresh tokens. */
async function revokeRefreshToken(store: Store, clientId: string, token: string, now: Date): Promise<boolean> {
  if (!isOpaque(token)) return false;
  const stored = await store.tokens.findRefreshToken(opaqueDigest(token));
  if (stored?.clientId !== clientId) return false;
  await store.tokens.revokeRefreshFamilies({ familyId: stored.familyId }, now);
  return true;
}
