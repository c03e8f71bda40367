import { decodeProtectedHeader } from "jose";
import type { Keyfob } from "../keyfob";
import { requireConfidential, type AuthenticatedClient } from "../oauth/client-auth";
import { OAuthError } from "../oauth/errors";
import { isOpaque, opaqueDigest } from "../oauth/opaque";
import { required } from "../oauth/params";
import { isLive } from "../tokens/refresh";
import { encodeSubject } from "../tokens/sub";
import { verifyAccessToken, type TokenKeySet } from "../tokens/verify";
import type { ProtocolRequest } from "../http/request";

const INACTIVE = { active: false } as const;

/**
 * Token introspection (RFC 7662, `POST /token/introspect`) for confidential clients, of access
 * tokens and refresh tokens alike (`token_type_hint` only orders the attempts). A client marked as
 * a resource server may introspect any client's tokens; any other only its own (RFC 7662 4: a
 * token it may not know about is answered as inactive). An invalid, expired or revoked token, and
 * a refresh token that could not be used now (used, or its client disabled or no longer allowed
 * refresh tokens), is `{"active": false}`. An access token bound to a DPoP key is answered with
 * token_type DPoP and its `cnf` (RFC 9449 6.2): the resource server then checks the request's
 * proof against `cnf.jkt`, as /userinfo does.
 */
export async function introspectToken(
  keyfob: Pick<Keyfob, "config" | "clock" | "store" | "keys" | "vehicleKeys">,
  request: ProtocolRequest,
) {
  const { params } = request;
  const caller = requireConfidential(await request.client());
  const token = required(params, "token");
  // A vehicle token's key is one of the vehicle set's: asking the access set first would have it
  // reload its keys for a kid it can never know (reloads are rationed, for the kids that matter).
  const kinds = (await signedByVehicleKey(keyfob, token))
    ? [introspectVehicleToken]
    : [introspectAccessToken, introspectVehicleToken, introspectRefreshToken];
  if (params.get("token_type_hint") === "refresh_token") kinds.reverse();
  for (const introspect of kinds) {
    const answer = await introspect(keyfob, caller, token);
    if (answer) return answer;
  }
  return INACTIVE;
}

/** Whether a value is a JWT whose `kid` is a key of the vehicle set's. */
async function signedByVehicleKey({ vehicleKeys }: Pick<Keyfob, "vehicleKeys">, token: string): Promise<boolean> {
  let kid: unknown;
  try {
    kid = decodeProtectedHeader(token).kid;
  } catch {
    return false;
  }
  return typeof kid === "string" && (await vehicleKeys.publicKeys()).some((key) => key.kid === kid);
}

/** An access token's answer, or undefined when the value is not an active access token. */
async function introspectAccessToken(
  keyfob: Pick<Keyfob, "config" | "clock" | "store" | "keys">,
  caller: AuthenticatedClient,
  token: string,
  signedBy?: TokenKeySet,
) {
  try {
    const { payload, clientId } = await verifyAccessToken(keyfob, token, signedBy);
    if (clientId !== caller.id && !caller.resourceServer) return INACTIVE;
    return {
      active: true,
      token_type: payload.cnf?.jkt === undefined ? "Bearer" : "DPoP",
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
      // A vehicle token's vehicle and privileges, and the client acting (RFC 8693 4.1).
      ...(Array.isArray(payload.permissions) && {
        asset: payload.asset,
        permissions: payload.permissions,
        scope: payload.permissions.join(" "),
        act: payload.act,
      }),
      ...(payload.cnf?.jkt !== undefined && { cnf: { jkt: payload.cnf.jkt } }),
    };
  } catch (error) {
    if (error instanceof OAuthError && error.code === "invalid_token") return undefined;
    throw error;
  }
}

/** A vehicle token's answer (signed by the vehicle key set, under its issuer), or undefined when the value is not an active one. */
const introspectVehicleToken = (
  keyfob: Pick<Keyfob, "config" | "clock" | "store" | "keys" | "vehicleKeys">,
  caller: AuthenticatedClient,
  token: string,
) => introspectAccessToken(keyfob, caller, token, { keys: keyfob.vehicleKeys, issuer: keyfob.config.vehicleTokenIssuer });

/** A refresh token's answer, or undefined when the value is not a refresh token of ours. */
async function introspectRefreshToken(keyfob: Pick<Keyfob, "config" | "clock" | "store">, caller: AuthenticatedClient, token: string) {
  if (!isOpaque(token)) return undefined;
  const stored = await keyfob.store.tokens.findRefreshToken(opaqueDigest(token));
  if (!stored) return undefined;
  if (!isLive(stored, keyfob.clock.now()) || (stored.clientId !== caller.id && !caller.resourceServer)) return INACTIVE;
  const seconds = (date: Date) => Math.floor(date.getTime() / 1000);
  // No token_type: RFC 7662 2.2 means the type of an access token (RFC 6749 7.1), which a refresh
  // token is not; node-oidc-provider leaves it out too.
  return {
    active: true,
    client_id: stored.clientId,
    scope: stored.scope,
    sub: encodeSubject({ userId: stored.accountId, connector: stored.connector }),
    iss: keyfob.config.issuerUrl,
    iat: seconds(stored.issuedAt),
    exp: seconds(stored.expiresAt),
  };
}
