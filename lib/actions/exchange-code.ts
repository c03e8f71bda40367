import type { Caller } from "../audit";
import type { Keyfob } from "../keyfob";
import { authenticateCachedClient, refuseChangedClient, type AuthenticatedClient } from "../oauth/client-auth";
import { requireProofFor, type DPoPProof } from "../oauth/dpop";
import { invalidGrant } from "../oauth/errors";
import { opaqueDigest } from "../oauth/opaque";
import { required, type Params } from "../oauth/params";
import { verifyCodeVerifier } from "../oauth/pkce";
import { OFFLINE_ACCESS, withoutOfflineAccess, type Scope } from "../oauth/scope";
import { issueTokens, tokenLifetimes, type Issued } from "../tokens/issue";
import { newFamily, newRefreshToken } from "../tokens/refresh";

/**
 * Flow B (`POST /token`, grant_type=authorization_code): redeems a one-time code for tokens. The
 * code is consumed and the token recorded with its audit event in one statement; presenting a redeemed code again is
 * refused and revokes every token issued from it (RFC 6749 4.1.2), refresh tokens included.
 *
 * offline_access (OpenID Connect Core 11) is granted when the client is allowed refresh tokens
 * (an admin's setting, Keyfob's condition in place of prompt=consent): the response then carries a
 * refresh_token, the first of a new family, stored in the statement that consumes the code.
 * Otherwise offline_access is dropped, and the response's `scope` says what was granted (RFC 6749
 * 5.1); the login does not fail.
 *
 * Two round trips: the code is read, and consumed with the token recorded; the client comes from
 * the instance's cache, and the consuming statement checks it again (lib/store/codes.ts).
 */
export async function exchangeCode(keyfob: Keyfob, request: Request, params: Params, caller: Caller, proof?: DPoPProof): Promise<Issued> {
  return redeemCode(keyfob, await authenticateCachedClient(keyfob.clients, request, params), params, caller, proof);
}

/**
 * The exchange for an already authenticated client (the /token endpoint, or Keyfob's own
 * dashboard), audited for `caller`. With a DPoP proof the access token is bound to its key, and so
 * is a public client's refresh-token family (RFC 9449 5); a code whose authorization request named
 * a key (dpop_jkt, RFC 9449 10) is redeemed only with a proof of that key.
 */
export async function redeemCode(
  keyfob: Keyfob,
  client: AuthenticatedClient,
  params: Params,
  caller: Caller,
  proof?: DPoPProof,
): Promise<Issued> {
  const { store, config } = keyfob;
  requireProofFor(client, proof);
  const code = required(params, "code");
  const redirectUri = required(params, "redirect_uri");

  const codeHash = opaqueDigest(code);
  const grant = await store.codes.findCode(codeHash);
  if (!grant || grant.clientId !== client.id) throw invalidGrant("unknown authorization code");
  if (grant.usedAt) {
    await store.tokens.revokeTokensOfCode(codeHash);
    throw invalidGrant("the authorization code has already been used; the tokens issued from it are revoked");
  }
  if (grant.expiresAt <= new Date()) throw invalidGrant("the authorization code has expired");
  if (grant.redirectUri !== redirectUri) throw invalidGrant("redirect_uri differs from the one of the authorization request");
  // A public client's code must have been requested with PKCE (startAuthorization refuses it otherwise).
  if (!client.confidential && grant.codeChallenge === null) throw invalidGrant("a public client must use PKCE");
  verifyCodeVerifier(grant.codeChallenge, params.get("code_verifier"));
  if (grant.dpopJkt !== null && grant.dpopJkt !== proof?.jkt)
    throw invalidGrant("the authorization code is bound to a DPoP key (dpop_jkt): redeem it with a DPoP proof of that key");

  const requested = grant.scope.split(" ") as Scope[];
  const offlineAccess =
    requested.includes(OFFLINE_ACCESS) && (client.refreshTokensAllowed ?? (await refreshTokensAllowed(keyfob, client.id)));
  const scope = offlineAccess ? requested : withoutOfflineAccess(requested);
  const { response, jti, expiresAt } = await issueTokens(keyfob.keys, config.issuerUrl, tokenLifetimes(config), {
    clientId: client.id,
    userId: grant.accountId,
    connector: grant.connector,
    scope,
    ethereumAddress: grant.accountId,
    nonce: grant.nonce ?? undefined,
    email: grant.email ?? undefined,
    emailVerified: grant.emailVerified,
    authTime: grant.authTime ?? undefined,
    amr: grant.amr?.split(" "),
    offlineAccess,
    jkt: proof?.jkt,
  });
  const now = new Date();
  const refreshToken = offlineAccess ? newRefreshToken() : undefined;
  const refresh = refreshToken && {
    tokenHash: refreshToken.tokenHash,
    grant: newFamily(
      config,
      {
        scope: scope.join(" "),
        email: grant.email,
        emailVerified: grant.emailVerified,
        // Codes record when the user logged in; one from before they did was issued right after the login.
        authTime: grant.authTime ?? new Date(grant.expiresAt.getTime() - config.authorizationCodeTtl * 1000),
        amr: grant.amr ?? "",
        // A confidential client authenticates its refreshes: only a public client's tokens need the key too.
        dpopJkt: client.confidential ? null : (proof?.jkt ?? null),
      },
      now,
    ),
  };
  const record = { jti, userId: grant.accountId, connector: grant.connector, scope: scope.join(" "), expiresAt };
  const redeemed = await store.codes.consumeCode(codeHash, record, caller, now, refresh, { secretHash: client.secretHash });
  if (!redeemed) await refused(keyfob, client, codeHash);
  return {
    response: {
      ...response,
      ...(refreshToken && { refresh_token: refreshToken.value }),
      ...(scope.length !== requested.length && { scope: scope.join(" ") }),
    },
    flow: "code_exchange",
    connector: grant.connector,
  };
}

/**
 * Why the consuming statement found nothing to consume, as the client is told: most often a
 * concurrent redemption of the same code (which revokes what it got), else the client disabled or
 * given a new secret since it was read, or the code's end passed meanwhile.
 */
async function refused({ store }: Keyfob, client: AuthenticatedClient, codeHash: string): Promise<never> {
  if ((await store.codes.findCode(codeHash))?.usedAt) {
    await store.tokens.revokeTokensOfCode(codeHash);
    throw invalidGrant("the authorization code has already been used; the tokens issued from it are revoked");
  }
  await refuseChangedClient(store, client);
  throw invalidGrant("the authorization code has expired");
}

/** Whether an admin allowed the client refresh tokens (asked only when the request holds offline_access). */
async function refreshTokensAllowed({ store }: Keyfob, clientId: string): Promise<boolean> {
  const client = await store.clients.find(clientId);
  return client?.refreshTokensAllowed === true;
}
