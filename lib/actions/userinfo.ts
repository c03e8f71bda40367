import type { Keyfob } from "../keyfob";
import { bearerToken, verifyAccessToken } from "../tokens/verify";

/** OIDC UserInfo (`GET|POST /userinfo`): the claims of the bearer token's subject, as its scope allows. */
export async function userinfo(keyfob: Keyfob, request: Request) {
  const { payload } = await verifyAccessToken(keyfob, bearerToken(request));
  const scope = (payload.scope ?? "").split(" ");
  return {
    sub: payload.sub,
    provider_id: payload.provider_id,
    ...(scope.includes("email") && {
      ethereum_address: payload.ethereum_address,
      ...(payload.email !== undefined && { email: payload.email }),
    }),
    email_verified: payload.email_verified,
  };
}
