import type { Keyfob } from "../keyfob";
import { authenticateClient } from "../oauth/client-auth";
import { OAuthError } from "../oauth/errors";
import { required, type Params } from "../oauth/params";
import { verifyAccessToken } from "../tokens/verify";

/**
 * Token introspection (RFC 7662, `POST /token/introspect`) for confidential clients. A client
 * marked as a resource server may introspect any client's tokens; any other only its own (RFC
 * 7662 4: a token it may not know about is answered as inactive). An invalid, expired or revoked
 * token is `{"active": false}`.
 */
export async function introspectToken(keyfob: Keyfob, request: Request, params: Params) {
  const caller = await authenticateClient(keyfob.db, request, params, { confidential: true });
  const token = required(params, "token");
  try {
    const { payload, clientId } = await verifyAccessToken(keyfob, token);
    if (clientId !== caller.id && !caller.resourceServer) return { active: false };
    return {
      active: true,
      token_type: "Bearer",
      client_id: clientId,
      scope: payload.scope,
      sub: payload.sub,
      aud: payload.aud,
      iss: payload.iss,
      iat: payload.iat,
      exp: payload.exp,
      jti: payload.jti,
      provider_id: payload.provider_id,
      ...(payload.ethereum_address !== undefined && { ethereum_address: payload.ethereum_address }),
    };
  } catch (error) {
    if (error instanceof OAuthError && error.code === "invalid_token") return { active: false };
    throw error;
  }
}
