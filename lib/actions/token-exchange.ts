import type { Keyfob } from "../keyfob";
import { requireProofFor } from "../oauth/dpop";
import { invalidGrant, invalidRequest, OAuthError } from "../oauth/errors";
import type { Issued } from "../tokens/issue";
import { verifyAccessToken, type ActiveToken } from "../tokens/verify";
import { exchangeForVehicleToken, privilegesOfPermissions } from "../vehicles/exchange";
import { grant, type GrantParams, type GrantRequest } from "./grant";

export const TOKEN_EXCHANGE_GRANT = "urn:ietf:params:oauth:grant-type:token-exchange";
/** The token type of what is exchanged and what is issued (RFC 8693 3). */
export const ACCESS_TOKEN_TYPE_URI = "urn:ietf:params:oauth:token-type:access_token";

export type TokenExchangeResponse = {
  access_token: string;
  issued_token_type: typeof ACCESS_TOKEN_TYPE_URI;
  token_type: "Bearer" | "DPoP";
  expires_in: number;
  scope: string;
};

/**
 * `POST /token` with grant_type=urn:ietf:params:oauth:grant-type:token-exchange (RFC 8693): the
 * client exchanges one of its live access tokens (`subject_token`, a Flow A developer token or an
 * end user's token) for a vehicle token: `resource` (RFC 8707) the vehicle's DID, `scope` the
 * privileges by name, `audience` the token's `aud` (optional). The decision and the token are
 * lib/vehicles/exchange.ts's, which the platform's endpoint (./vehicle-token-exchange.ts) shares.
 * Errors as RFC 8693 2.2.2 and RFC 8707 2 say: invalid_target for a vehicle not known, invalid_scope
 * for a privilege not granted, invalid_grant for a subject token that is not the client's live one.
 */
export const tokenExchange = grant({
  required: ["subject_token", "subject_token_type", "resource", "scope"],
  optional: ["audience", "requested_token_type", "actor_token", "actor_token_type"],
  handle: exchangeToken,
});

type Params = GrantParams<
  "subject_token" | "subject_token_type" | "resource" | "scope",
  "audience" | "requested_token_type" | "actor_token" | "actor_token_type"
>;

async function exchangeToken(
  keyfob: Pick<Keyfob, "config" | "clock" | "store" | "keys" | "clients" | "vehicleKeys" | "vehicleAccess">,
  { client, params, proof, caller }: GrantRequest<Params>,
): Promise<Issued<TokenExchangeResponse>> {
  requireProofFor(client, proof);
  if (params.subject_token_type !== ACCESS_TOKEN_TYPE_URI)
    throw invalidRequest(`subject_token_type must be ${ACCESS_TOKEN_TYPE_URI}: only access tokens are exchanged`);
  if (params.requested_token_type !== undefined && params.requested_token_type !== ACCESS_TOKEN_TYPE_URI)
    throw invalidRequest(`requested_token_type must be ${ACCESS_TOKEN_TYPE_URI}`);
  if (params.actor_token !== undefined || params.actor_token_type !== undefined)
    throw invalidRequest("actor_token is not supported: the client itself is the actor");
  const subject = await verifiedSubject(keyfob, params.subject_token);
  const issued = await exchangeForVehicleToken(keyfob, {
    clientId: client.id,
    subject,
    resource: params.resource,
    privileges: privilegesOfPermissions(params.scope.split(" ").filter(Boolean)),
    audience: params.audience === undefined ? undefined : [params.audience],
    proof,
    caller,
  });
  return {
    response: {
      access_token: issued.token,
      issued_token_type: ACCESS_TOKEN_TYPE_URI,
      token_type: issued.bound ? "DPoP" : "Bearer",
      expires_in: issued.expiresIn,
      scope: issued.permissions.join(" "),
    },
    flow: "token_exchange",
    connector: String(subject.payload.provider_id ?? "unknown"),
  };
}

/** The subject token, verified as an access token of ours; anything else is invalid_grant (RFC 8693 2.2.2). */
export async function verifiedSubject(keyfob: Pick<Keyfob, "config" | "clock" | "store" | "keys">, token: string): Promise<ActiveToken> {
  try {
    return await verifyAccessToken(keyfob, token);
  } catch (error) {
    if (error instanceof OAuthError && error.code === "invalid_token")
      throw invalidGrant("the subject token is not a live access token of this server: invalid, expired or revoked");
    throw error;
  }
}
