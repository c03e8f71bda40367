import { randomUUID } from "node:crypto";
import { SignJWT } from "jose";
import type { Keyfob } from "../keyfob";
import { refuseChangedClient } from "../oauth/client-auth";
import type { LicenseSignature } from "../oauth/client-assertion";
import { requireProofFor } from "../oauth/dpop";
import { invalidClient, invalidGrant, OAuthError } from "../oauth/errors";
import { requestedResource } from "../oauth/resource";
import { covers, isManagementScope, MANAGEMENT_SCOPES, type ManagementScope } from "../admin/scopes";
import { parseScope } from "../oauth/scope";
import {
  ACCESS_TOKEN_TYPE,
  binding,
  issueAccessToken,
  newAccessTokenId,
  tokenLifetimes,
  tokenType,
  type Issued,
  type TokenType,
} from "../tokens/issue";
import { encodeSubject } from "../tokens/sub";
import { grant, type GrantParams, type GrantRequest } from "./grant";

/** The connector that the `sub` of a client's own token names, and the issued-token record carries. */
export const CLIENT_CREDENTIALS_CONNECTOR = "client_credentials";

/** Admin tokens are short-lived: ten minutes, or ACCESS_TOKEN_TTL when that is shorter. */
export const ADMIN_TOKEN_TTL = 600;

export type ClientCredentialsResponse = { access_token: string; token_type: TokenType; expires_in: number; scope: string };

/**
 * `POST /token` with grant_type=client_credentials (RFC 6749 4.4): an access token for the client
 * itself, for the management API. Only a confidential client authenticates this way (its secret,
 * Basic or in the body), only when an admin allowed it the management API (Client.managementApi),
 * and only with management scopes (lib/admin/scopes.ts) that the admin allowed it: those it asks
 * for, or all of them when `scope` is absent (RFC 6749 3.3). No ID token and no refresh token (4.4.3).
 *
 * The token is an RFC 9068 JWT (`typ: at+jwt`) with `aud` and `client_id` the client, and `sub` the
 * client in the platform's encoding ({user id: the client_id, connector: client_credentials}),
 * like every sub Keyfob issues, so resource servers and the audit log decode it alike. It lives
 * ADMIN_TOKEN_TTL seconds, and is recorded in issued_tokens with its audit event like any access token: revocation,
 * introspection and the management API's own check (lib/admin/api.ts) see it. The client is read
 * from the instance's cache, as for the other grants; the statement that records the token checks
 * it again in the database (lib/store/tokens.ts), so a change is effective on the next request.
 * With a DPoP proof the token is bound to its key (RFC 9449 5) and used with proofs of it. With a
 * `resource` the client registered (RFC 8707), `aud` is that resource instead of the client.
 *
 * A license authenticated by an assertion that one of its signers (or it) signed gets instead the
 * access token Flow A issues for that signature (issueLicenseToken): its backend uses any OAuth
 * library's client_credentials with private_key_jwt rather than Flow A's exchange.
 */
export const clientCredentials = grant({ required: [], optional: ["scope", "resource"], handle: issueClientToken });

type ClientCredentialsRequest = GrantRequest<GrantParams<never, "scope" | "resource">>;

async function issueClientToken(
  keyfob: Pick<Keyfob, "config" | "clock" | "store" | "keys">,
  request: ClientCredentialsRequest,
): Promise<Issued<ClientCredentialsResponse>> {
  const { client, params, caller, proof } = request;
  requireProofFor(client, proof);
  if (client.licenseSignature) return issueLicenseToken(keyfob, request, client.licenseSignature);
  if (!client.secretHash)
    throw new OAuthError("unauthorized_client", "client_credentials is for confidential clients (with a secret) only");

  const allowed = client.managementScopes ?? [];
  if (allowed.length === 0) throw notAllowed();
  const requested = [...new Set(params.scope?.split(" ").filter(Boolean) ?? allowed)];
  const unknown = requested.find((scope) => !isManagementScope(scope));
  if (unknown !== undefined || requested.length === 0)
    throw new OAuthError(
      "invalid_scope",
      `client_credentials grants the management scopes only: ${Object.keys(MANAGEMENT_SCOPES).join(", ")}`,
    );
  const withheld = requested.find((scope) => !covers(allowed, scope as ManagementScope));
  if (withheld !== undefined)
    throw new OAuthError("invalid_scope", `this client is not allowed the scope ${withheld}; it may get ${allowed.join(", ")}`);
  const scope = requested.join(" ");
  const resource = requestedResource(client.resources, params.resource);

  const { kid, alg, privateKey } = await keyfob.keys.signingKey(client.idTokenSignedResponseAlg);
  const lifetime = Math.min(ADMIN_TOKEN_TTL, keyfob.config.accessTokenTtl);
  const now = keyfob.clock.now();
  const iat = Math.floor(now.getTime() / 1000);
  const jti = randomUUID();
  const accessToken = await new SignJWT({
    iss: keyfob.config.issuerUrl,
    sub: encodeSubject({ userId: client.id, connector: CLIENT_CREDENTIALS_CONNECTOR }),
    aud: resource ?? client.id,
    client_id: client.id,
    iat,
    exp: iat + lifetime,
    jti,
    scope,
    provider_id: CLIENT_CREDENTIALS_CONNECTOR,
    ...binding(proof?.jkt),
  })
    .setProtectedHeader({ alg, kid, typ: ACCESS_TOKEN_TYPE })
    .sign(privateKey);
  const record = { jti, userId: client.id, connector: CLIENT_CREDENTIALS_CONNECTOR, scope, expiresAt: new Date((iat + lifetime) * 1000) };
  if (!(await keyfob.store.tokens.recordClientToken(client.id, client.secretHash, requested, record, caller, now)))
    await refused(keyfob, client.id, client.secretHash);
  return {
    response: { access_token: accessToken, token_type: tokenType(proof?.jkt), expires_in: lifetime, scope },
    flow: "client_credentials",
    connector: CLIENT_CREDENTIALS_CONNECTOR,
  };
}

/** Flow A's scope when a license's backend asks for none (what its SDKs send to generate_challenge). */
const LICENSE_DEFAULT_SCOPE = "openid email";

/**
 * A license's token for the signature its assertion carried, as Flow A issues it for the same
 * signature (lib/actions/submit-challenge.ts): for the license's own address (a signer signs for
 * the license, as a contract account's owner does), with the web3 connector, in the client's
 * signing alg, recorded with the signer so that, as for Flow A's token, revoking the signer
 * refuses the token's vehicle exchange (lib/store/tokens.ts) at once. Flow A's scopes (openid required; default LICENSE_DEFAULT_SCOPE). Access
 * token only: OpenID Connect defines no ID token for client_credentials, and no refresh token
 * comes with it (RFC 6749 4.4.3); the backend asks again with a fresh assertion.
 */
async function issueLicenseToken(
  { config, clock, store, keys }: Pick<Keyfob, "config" | "clock" | "store" | "keys">,
  { client, params, caller, proof }: ClientCredentialsRequest,
  signature: LicenseSignature,
): Promise<Issued<ClientCredentialsResponse>> {
  const scope = parseScope(params.scope ?? LICENSE_DEFAULT_SCOPE);
  const resource = requestedResource(client.resources, params.resource);
  const lifetimes = tokenLifetimes(config);
  const now = clock.now();
  const id = newAccessTokenId(lifetimes, now.getTime());
  const address = client.id;
  const accessToken = await issueAccessToken(
    keys,
    config.issuerUrl,
    lifetimes,
    {
      clientId: client.id,
      signingAlg: client.idTokenSignedResponseAlg,
      userId: address,
      connector: WEB3_CONNECTOR,
      scope,
      ethereumAddress: address,
      emailVerified: false,
      jkt: proof?.jkt,
      resource,
    },
    id,
  );
  const granted = scope.join(" ");
  const record = { jti: id.jti, userId: address, connector: WEB3_CONNECTOR, scope: granted, expiresAt: id.expiresAt };
  if (!(await store.tokens.recordLicenseToken(client.id, record, caller, { signer: signature.signer, proven: proof !== undefined }, now))) {
    await refuseChangedClient(store, client);
    if (signature.signer) throw invalidClient("client authentication failed: the signer was revoked while the request was handled");
    throw invalidGrant("this account is blocked, or the client's settings changed while the request was handled");
  }
  return {
    response: { access_token: accessToken, token_type: tokenType(proof?.jkt), expires_in: lifetimes.accessToken, scope: granted },
    flow: "client_credentials",
    connector: WEB3_CONNECTOR,
  };
}

/** The connector of Flow A's tokens, whose subject is an address. */
const WEB3_CONNECTOR = "web3";

const notAllowed = () =>
  new OAuthError("unauthorized_client", "this client is not allowed the management API; an admin can allow it in the client's settings");

/** Why the recording statement refused a client read from the cache: it changed since. */
async function refused({ store }: Pick<Keyfob, "store">, id: string, secretHash: string): Promise<never> {
  await refuseChangedClient(store, { id, secretHash });
  throw notAllowed();
}
