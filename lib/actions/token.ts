import type { Caller } from "../audit";
import type { Keyfob } from "../keyfob";
import { checkDPoPProof, type DPoPProof } from "../oauth/dpop";
import { OAuthError } from "../oauth/errors";
import { required, type Params } from "../oauth/params";
import type { Issued } from "../tokens/issue";
import { clientCredentials } from "./client-credentials";
import { DEVICE_CODE_GRANT, deviceCode } from "./device-code";
import { exchangeCode } from "./exchange-code";
import { refreshToken } from "./refresh-token";
import type { HttpRequest } from "../http/request";

/** The grants of the token endpoint, each its own action. */
const GRANTS: Record<
  string,
  (keyfob: Keyfob, request: HttpRequest, params: Params, caller: Caller, proof: DPoPProof | undefined) => Promise<Issued<unknown>>
> = {
  authorization_code: exchangeCode,
  refresh_token: refreshToken,
  client_credentials: clientCredentials,
  [DEVICE_CODE_GRANT]: deviceCode,
};

/** What discovery lists as grant_types_supported. */
export const GRANT_TYPES = Object.keys(GRANTS);

/**
 * `POST /token` (RFC 6749 3.2): the action of the request's grant_type, with the request's DPoP
 * proof if it has one (RFC 9449 5): every grant binds the access token it issues to the proof's key.
 */
export async function token(keyfob: Keyfob, request: HttpRequest, params: Params, caller: Caller): Promise<Issued<unknown>> {
  const grantType = required(params, "grant_type");
  const grant = Object.hasOwn(GRANTS, grantType) ? GRANTS[grantType] : undefined;
  if (!grant) throw new OAuthError("unsupported_grant_type", `grant_type must be one of: ${GRANT_TYPES.join(", ")}`);
  const proof = await checkDPoPProof(keyfob, request, `${keyfob.config.issuerUrl}/token`);
  return grant(keyfob, request, params, caller, proof);
}
