import type { Keyfob } from "../keyfob";
import { checkDPoPProof } from "../oauth/dpop";
import { OAuthError } from "../oauth/errors";
import { required } from "../oauth/params";
import type { Issued } from "../tokens/issue";
import type { ProtocolRequest } from "../http/request";
import { clientCredentials } from "./client-credentials";
import { DEVICE_CODE_GRANT, deviceCode } from "./device-code";
import { authorizationCode } from "./exchange-code";
import type { Grant } from "./grant";
import { refreshToken } from "./refresh-token";
import { TOKEN_EXCHANGE_GRANT, tokenExchange } from "./token-exchange";

/** The grants of the token endpoint, each its own action with its own parameters (lib/actions/grant.ts). */
const GRANTS: Record<string, Grant> = {
  authorization_code: authorizationCode,
  refresh_token: refreshToken,
  client_credentials: clientCredentials,
  [DEVICE_CODE_GRANT]: deviceCode,
  [TOKEN_EXCHANGE_GRANT]: tokenExchange,
};

/** What discovery lists as grant_types_supported. */
export const GRANT_TYPES = Object.keys(GRANTS);

/**
 * `POST /token` (RFC 6749 3.2): the grant the request's grant_type names, with the request's DPoP
 * proof if it has one (RFC 9449 5: every grant binds the access token it issues to the proof's
 * key), the client authenticated once before the grant (RFC 6749 2.3), and the grant's own
 * parameters (a required one missing is invalid_request).
 */
export async function token(keyfob: Keyfob, request: ProtocolRequest): Promise<Issued<unknown>> {
  const grantType = required(request.params, "grant_type");
  const grant = Object.hasOwn(GRANTS, grantType) ? GRANTS[grantType] : undefined;
  if (!grant) throw new OAuthError("unsupported_grant_type", `grant_type must be one of: ${GRANT_TYPES.join(", ")}`);
  const proof = await checkDPoPProof(keyfob, request.http, `${keyfob.config.issuerUrl}/token`);
  const client = await request.client();
  return grant.answer(keyfob, { client, proof, caller: request.caller }, request.params);
}
