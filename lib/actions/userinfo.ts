import type { Keyfob } from "../keyfob";
import { invalidRequest } from "../oauth/errors";
import { presentedToken, verifyPresentedToken } from "../tokens/verify";
import type { ProtocolRequest } from "../http/request";

/**
 * OIDC UserInfo (`GET|POST /userinfo`): the claims of the access token's subject, as its scope
 * allows. The token comes in the Authorization header (RFC 6750 2.1) or, on a form-encoded POST,
 * as `access_token` in the body (2.2); never in the URL (2.3), and never both ways at once. A token
 * bound to a DPoP key comes as `Authorization: DPoP`, with a proof of the key (RFC 9449 7).
 */
export async function userinfo(
  keyfob: Pick<Keyfob, "config" | "clock" | "store" | "keys" | "macKeys">,
  { http: request, params }: ProtocolRequest,
) {
  const inBody = params.get("access_token");
  if (inBody !== undefined && new URL(request.url).searchParams.has("access_token")) {
    throw invalidRequest("the access token must not be sent in the URL");
  }
  if (inBody !== undefined && request.headers.has("authorization")) throw invalidRequest("the access token was sent more than one way");
  const presented = inBody !== undefined ? { token: inBody, scheme: "Bearer" as const } : presentedToken(request);
  const { payload } = await verifyPresentedToken(keyfob, request, presented, `${keyfob.config.issuerUrl}/userinfo`);
  const scope = (payload.scope ?? "").split(" ");
  return {
    sub: payload.sub,
    provider_id: payload.provider_id,
    ...(scope.includes("email") && {
      ethereum_address: payload.ethereum_address,
      ...(payload.email !== undefined && { email: payload.email }),
    }),
    email_verified: payload.email_verified,
    ...(scope.includes("profile") && {
      ...(payload.preferred_username !== undefined && { preferred_username: payload.preferred_username }),
      ...(payload.picture !== undefined && { picture: payload.picture }),
    }),
  };
}
