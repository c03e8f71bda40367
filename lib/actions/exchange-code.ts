import { profileClaims } from "../ens/profiles";
import type { Keyfob } from "../keyfob";
import { refuseChangedClient, type AuthenticatedClient } from "../oauth/client-auth";
import { requireProofFor, type DPoPProof } from "../oauth/dpop";
import { invalidGrant } from "../oauth/errors";
import { opaqueDigest } from "../oauth/opaque";
import { expectedCodeChallenge, verifyCodeVerifier } from "../oauth/pkce";
import { requestedResource, requireGrantedResource } from "../oauth/resource";
import type { Scope } from "../oauth/scope";
import { sessionSid } from "../sessions/login-session";
import type { GrantRedemption, RedeemedGrant } from "../store/contract";
import { issueTokens, newAccessTokenId, tokenLifetimes, type AccessTokenId, type Issued, type TokenResponse } from "../tokens/issue";
import { newFamily, newRefreshToken, type NewRefreshToken } from "../tokens/refresh";
import { grant, type GrantParams, type GrantRequest } from "./grant";

/**
 * Flow B (`POST /token`, grant_type=authorization_code): redeems a one-time code for tokens. The
 * code is checked and consumed, and the token recorded with its audit event, in one statement before
 * the tokens are signed (lib/store/authorization-codes.ts); presenting a redeemed code again is refused and revokes
 * every token issued from it (RFC 6749 4.1.2), refresh tokens included.
 *
 * offline_access (OpenID Connect Core 11) is granted when the client is allowed refresh tokens
 * (an admin's setting, Keyfob's condition in place of prompt=consent): the response then carries a
 * refresh_token, the first of a new family, stored in the statement that consumes the code.
 * Otherwise offline_access is dropped, and the response's `scope` says what was granted (RFC 6749
 * 5.1); the login does not fail.
 *
 * A `resource` (RFC 8707 2.2) must be the one the authorization request named; without it the access
 * token is for the code's resource all the same, or for the client when the request named none.
 *
 * One round trip when the code is good; a refused one is read again to say why.
 */
export const authorizationCode = grant({
  required: ["code", "redirect_uri"],
  optional: ["code_verifier", "resource"],
  handle: redeemCode,
});

/** The code exchange's parameters (RFC 6749 4.1.3, RFC 7636 4.5, RFC 8707 2.2). */
export type CodeParams = GrantParams<"code" | "redirect_uri", "code_verifier" | "resource">;

/**
 * The exchange for an authenticated client (the /token endpoint, or Keyfob's own dashboard),
 * audited for `caller`. With a DPoP proof the access token is bound to its key, and so is a public
 * client's refresh-token family (RFC 9449 5); a code whose authorization request named a key
 * (dpop_jkt, RFC 9449 10) is redeemed only with a proof of that key.
 */
export async function redeemCode(
  keyfob: Pick<Keyfob, "config" | "clock" | "store" | "keys">,
  { client, params, caller, proof }: GrantRequest<CodeParams>,
): Promise<Issued> {
  requireProofFor(client, proof);
  const codeHash = opaqueDigest(params.code);
  const redirectUri = params.redirect_uri;
  const verifier = params.code_verifier;
  const resource = requestedResource(client.resources, params.resource);
  const redemption = grantRedemption(keyfob, client, proof);
  const grant = await keyfob.store.authorizationCodes.redeem(
    {
      ...redemption,
      codeHash,
      redirectUri,
      verifierChallenge: expectedCodeChallenge(verifier),
      confidential: client.confidential,
      proofJkt: proof?.jkt ?? null,
      resource: resource ?? null,
    },
    caller,
    redemption.now,
  );
  if (!grant) return refused(keyfob, client, codeHash, { redirectUri, verifier, proof, resource });
  return { response: await issueGrant(keyfob, client, redemption, grant), flow: "code_exchange", connector: grant.connector };
}

/**
 * What a grant's redemption records, made before it runs: the access token's id, the key it is
 * bound to (a DPoP proof's), and a refresh token when the client may get one.
 */
export type PreparedRedemption = GrantRedemption & { now: Date; token: AccessTokenId; jkt?: string; refreshToken?: NewRefreshToken };

export function grantRedemption(
  { config, clock }: Pick<Keyfob, "config" | "clock">,
  client: AuthenticatedClient,
  proof?: DPoPProof,
): PreparedRedemption {
  const now = clock.now();
  // Stored only when offline_access is granted, which the statement decides; not made for a client
  // known not to get refresh tokens (its random value and digest measured 0.07 ms per exchange).
  const refreshToken = client.refreshTokensAllowed === false ? undefined : newRefreshToken();
  return {
    now,
    clientId: client.id,
    secretHash: client.secretHash,
    token: newAccessTokenId(tokenLifetimes(config), now.getTime()),
    jkt: proof?.jkt,
    refreshToken,
    refresh: refreshToken && {
      tokenHash: refreshToken.tokenHash,
      ...newFamily(config, now),
      // A confidential client authenticates its refreshes: only a public client's tokens need the key too.
      dpopJkt: client.confidential ? null : (proof?.jkt ?? null),
    },
    codeTtl: config.authorizationCodeTtl,
  };
}

/** Signs the tokens of a redeemed grant: the response, with the refresh token when one was stored and the scope when it differs from the request's. */
export async function issueGrant(
  keyfob: Pick<Keyfob, "config" | "clock" | "store" | "keys">,
  client: AuthenticatedClient,
  redemption: PreparedRedemption,
  grant: RedeemedGrant,
): Promise<TokenResponse> {
  const { keys, config } = keyfob;
  const scope = grant.grantedScope.split(" ") as Scope[];
  const { response } = await issueTokens(
    keys,
    config.issuerUrl,
    tokenLifetimes(config),
    {
      clientId: client.id,
      signingAlg: client.idTokenSignedResponseAlg,
      userId: grant.accountId,
      connector: grant.connector,
      scope,
      ethereumAddress: grant.accountId,
      nonce: grant.nonce ?? undefined,
      email: grant.email ?? undefined,
      emailVerified: grant.emailVerified,
      profile: await profileClaims(keyfob, grant.accountId, scope),
      authTime: grant.authTime ?? undefined,
      amr: grant.amr?.split(" "),
      sid: grant.sessionId ? sessionSid(grant.sessionId) : undefined,
      offlineAccess: grant.offlineAccess,
      jkt: redemption.jkt,
      resource: grant.resource ?? undefined,
    },
    redemption.token,
  );
  return {
    ...response,
    ...(grant.offlineAccess && redemption.refreshToken && { refresh_token: redemption.refreshToken.value }),
    ...(grant.grantedScope !== grant.scope && { scope: grant.grantedScope }),
  };
}

/**
 * Why the redeeming statement found nothing to redeem, as the client is told, from the code as it
 * is now: unknown, another redirect URI, verifier, DPoP key or resource, already used (which
 * revokes what it gave: most often a concurrent redemption), expired, its account blocked or
 * deleted, else the client disabled or given a new secret since it was read. Reuse is judged last
 * of the request's own checks: only a request that would have redeemed the code revokes its tokens,
 * so a stranger with a used code and a made-up verifier cannot revoke the rightful client's tokens.
 */
async function refused(
  { store, clock }: Pick<Keyfob, "clock" | "store">,
  client: AuthenticatedClient,
  codeHash: string,
  { redirectUri, verifier, proof, resource }: { redirectUri: string; verifier?: string; proof?: DPoPProof; resource?: string },
): Promise<never> {
  const grant = await store.authorizationCodes.find(codeHash);
  if (!grant || grant.clientId !== client.id) throw invalidGrant("unknown authorization code");
  if (grant.redirectUri !== redirectUri) throw invalidGrant("redirect_uri differs from the one of the authorization request");
  // A public client's code must have been requested with PKCE (startAuthorization refuses it otherwise).
  if (!client.confidential && grant.codeChallenge === null) throw invalidGrant("a public client must use PKCE");
  verifyCodeVerifier(grant.codeChallenge, verifier);
  if (grant.dpopJkt !== null && grant.dpopJkt !== proof?.jkt)
    throw invalidGrant("the authorization code is bound to a DPoP key (dpop_jkt): redeem it with a DPoP proof of that key");
  requireGrantedResource(grant.resource, resource);
  if (grant.usedAt) {
    await store.tokens.revokeTokensOfCode(codeHash, clock.now());
    throw invalidGrant("the authorization code has already been used; the tokens issued from it are revoked");
  }
  if (grant.expiresAt <= clock.now()) throw invalidGrant("the authorization code has expired");
  const account = await store.accounts.find(grant.accountId);
  if (!account || account.blockedAt) throw invalidGrant(`the code's account ${account ? "is blocked" : "no longer exists"}`);
  await refuseChangedClient(store, client);
  throw invalidGrant("the authorization code has expired");
}
