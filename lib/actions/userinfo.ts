import type { Keyfob } from "../keyfob";
import { invalidRequest } from "../oauth/errors";
import type { Params } from "../oauth/params";
import { bearerToken, verifyAccessToken } from "../tokens/verify";

/**
 * OIDC UserInfo (`GET|POST /userinfo`): the claims of the access token's subject, as its scope
 * allows. The token comes in the Authorization header (RFC 6750 2.1) or, on a form-encoded POST,
 * as `access_token` in the body (2.2); never in the URL (2.3), and never both ways at once.
 */
export async function userinfo(keyfob: Keyfob, request: Request, params: Params) {
  const inBody = params.get("access_token");
  if (inBody !== undefined && new URL(request.url).searchParams.has("access_token")) {
    throw invalidRequest("the access token must not be sent in the URL");
  }
  if (inBody !== undefined && request.headers.has("authorization")) throw invalidRequest("the access token was sent more than one way");
  const { payload } = await verifyAccessToken(keyfob, inBody ?? bearerToken(request));
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
