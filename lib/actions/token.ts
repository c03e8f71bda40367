import type { Caller } from "../audit";
import type { Keyfob } from "../keyfob";
import { OAuthError } from "../oauth/errors";
import { required, type Params } from "../oauth/params";
import type { Issued } from "../tokens/issue";
import { clientCredentials } from "./client-credentials";
import { DEVICE_CODE_GRANT, deviceCode } from "./device-code";
import { exchangeCode } from "./exchange-code";
import { refreshToken } from "./refresh-token";

/** The grants of the token endpoint, each its own action. */
const GRANTS: Record<string, (keyfob: Keyfob, request: Request, params: Params, caller: Caller) => Promise<Issued<unknown>>> = {
  authorization_code: exchangeCode,
  refresh_token: refreshToken,
  client_credentials: clientCredentials,
  [DEVICE_CODE_GRANT]: deviceCode,
};

/** What discovery lists as grant_types_supported. */
export const GRANT_TYPES = Object.keys(GRANTS);

/** `POST /token` (RFC 6749 3.2): the action of the request's grant_type. */
export function token(keyfob: Keyfob, request: Request, params: Params, caller: Caller): Promise<Issued<unknown>> {
  const grantType = required(params, "grant_type");
  const grant = Object.hasOwn(GRANTS, grantType) ? GRANTS[grantType] : undefined;
  if (!grant) throw new OAuthError("unsupported_grant_type", `grant_type must be one of: ${GRANT_TYPES.join(", ")}`);
  return grant(keyfob, request, params, caller);
}
