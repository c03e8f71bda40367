import type { Caller } from "../audit";
import { profileClaims } from "../ens/profiles";
import type { Keyfob } from "../keyfob";
import { requireProofFor } from "../oauth/dpop";
import type { AuthenticatedClient } from "../oauth/client-auth";
import { invalidClient, invalidGrant, OAuthError } from "../oauth/errors";
import { isOpaque, opaqueDigest } from "../oauth/opaque";
import { grantedResource } from "../oauth/resource";
import { narrowScope, OFFLINE_ACCESS, type Scope } from "../oauth/scope";
import { issueTokens, newAccessTokenId, tokenLifetimes, type Issued } from "../tokens/issue";
import type { RefreshTokenRow } from "../store/contract";
import { successorExpiry, successorToken, withinReuseGrace } from "../tokens/refresh";
import { sessionSid } from "../sessions/login-session";
import { grant, type GrantParams, type GrantRequest } from "./grant";

/**
 * `POST /token` with grant_type=refresh_token (RFC 6749 6, OpenID Connect Core 12): a new access
 * token and ID token for the grant behind a refresh token, and a new refresh token in its place
 * (rotation, always: RFC 9700 4.14.2).
 *
 * The client authenticates as for the code exchange (public clients by client_id). The token must
 * be the client's, unused, unrevoked, within its idle end and its family's end, its account
 * existing and unblocked, and the client still enabled and still allowed refresh tokens
 * (unauthorized_client otherwise). `scope` may only
 * narrow the original grant (invalid_scope); the successor keeps the original scope (RFC 6749 6).
 * The access token is for the grant's resource (RFC 8707), if it was granted one and the client still
 * registers it; `resource` may name that one and no other (invalid_target).
 * The ID token carries the claims of the code exchange: sub, email from the stored grant, auth_time,
 * amr and sid of the original login, no nonce (OpenID Connect Core 12.2, Back-Channel Logout 1.0 2.4).
 *
 * The presented token is marked used in the statement that stores its successor and records the
 * access token, so of concurrent uses exactly one rotates it. A used token presented again, whether
 * replayed later or racing its own first use, means two parties hold the family: every refresh
 * token of the family and every access token issued with them are revoked, the answer is
 * invalid_grant, and the event is audited (`refresh_token.reused`). Except within
 * REFRESH_TOKEN_REUSE_GRACE of its first use (an app that refreshed twice at once, in the
 * foreground and the background): then, while the successor that use stored is still unused, the
 * answer is that same successor (derived from the presented token: lib/tokens/refresh.ts) with a
 * new access token, so the app ends up holding one refresh token whichever answer it keeps.
 */
export const refreshToken = grant({ required: ["refresh_token"], optional: ["scope", "resource"], handle: redeemRefreshToken });

/**
 * The refresh for an authenticated client, audited for `caller`. A family bound to a DPoP key (a
 * public client's, RFC 9449 5) is refreshed only with a proof of that key, a use within the grace
 * too; the new access token is bound to the proof's key whenever there is one.
 */
async function redeemRefreshToken(
  keyfob: Pick<Keyfob, "config" | "clock" | "store" | "keys" | "macKeys" | "audit">,
  { client, params, caller, proof }: GrantRequest<GrantParams<"refresh_token", "scope" | "resource">>,
): Promise<Issued> {
  const { store, config } = keyfob;
  requireProofFor(client, proof);
  const presented = params.refresh_token;
  const requestedScope = params.scope;
  // Ours are 43 base64url characters: anything else was never issued, and is not looked up.
  if (!isOpaque(presented)) throw invalidGrant("unknown refresh token");
  const tokenHash = opaqueDigest(presented);
  const now = keyfob.clock.now();
  const stored = await store.tokens.findRefreshToken(tokenHash);
  // Another client's token is answered like an unknown one, and left alone.
  if (!stored || stored.clientId !== client.id) throw invalidGrant("unknown refresh token");
  // The client may have come from the cache: its row here is the database's word, as of now.
  if (!stored.client.enabled) throw invalidClient("unknown or disabled client");
  if (stored.usedAt && !withinReuseGrace(config, stored.usedAt, now)) throw await reused(keyfob, stored, caller);
  if (stored.revokedAt) throw invalidGrant("the refresh token has been revoked");
  if (stored.expiresAt <= now || stored.familyExpiresAt <= now) throw invalidGrant("the refresh token has expired");
  if (!stored.client.refreshTokensAllowed) throw new OAuthError("unauthorized_client", "this client is no longer allowed refresh tokens");
  if (stored.dpopJkt !== null && stored.dpopJkt !== proof?.jkt)
    throw invalidGrant("the refresh token is bound to a DPoP key: refresh with a DPoP proof of that key");
  const resource = grantedResource(stored.client.resources, stored.resource, params.resource);

  const original = stored.scope.split(" ") as Scope[];
  const scope = narrowScope(original, requestedScope);
  const lifetimes = tokenLifetimes(config);
  const { response, jti, expiresAt } = await issueTokens(
    keyfob.keys,
    config.issuerUrl,
    lifetimes,
    {
      clientId: client.id,
      signingAlg: client.idTokenSignedResponseAlg,
      userId: stored.accountId,
      connector: stored.connector,
      scope,
      ethereumAddress: stored.accountId,
      email: stored.email ?? undefined,
      emailVerified: stored.emailVerified,
      profile: await profileClaims(keyfob, stored.accountId, scope),
      authTime: stored.authTime,
      amr: stored.amr ? stored.amr.split(" ") : undefined,
      // The first ID token's session, kept (Back-Channel Logout 1.0 2.4).
      sid: stored.sessionId ? sessionSid(stored.sessionId) : undefined,
      // A refresh token comes with these tokens whatever scope they ask for: offline_access stays if asked.
      offlineAccess: scope.includes(OFFLINE_ACCESS),
      jkt: proof?.jkt,
      resource,
    },
    newAccessTokenId(lifetimes, now.getTime()),
  );
  const successor = successorToken(keyfob.macKeys.refreshSuccessor, presented);
  const issued = { jti, scope: scope.join(" "), expiresAt };
  const rotated =
    stored.usedAt === null &&
    (await store.tokens.rotateRefreshToken(
      { tokenHash, clientId: client.id, secretHash: client.secretHash },
      { tokenHash: successor.tokenHash, expiresAt: successorExpiry(config, stored.familyExpiresAt, now) },
      issued,
      caller,
      now,
    ));
  if (!rotated) {
    // Used already (within the grace, or by a concurrent use of the same token), or something else changed since it was read.
    const current = stored.usedAt ? stored : await store.tokens.findRefreshToken(tokenHash);
    if (!current?.usedAt) throw await notRotated(keyfob, client, stored, current);
    const again =
      withinReuseGrace(config, current.usedAt, now) &&
      (await store.tokens.recordReuseWithinGrace(
        successor.tokenHash,
        { clientId: client.id, secretHash: client.secretHash },
        issued,
        { ...caller, endpoint: `${caller.endpoint} (refresh token reused within REFRESH_TOKEN_REUSE_GRACE)` },
        now,
      ));
    if (!again) throw await reused(keyfob, current, caller);
  }
  const asked = requestedScope === undefined ? original : (requestedScope.split(" ").filter(Boolean) as Scope[]);
  const differs = scope.length !== new Set(asked).size;
  return {
    response: { ...response, refresh_token: successor.value, ...(differs && { scope: scope.join(" ") }) },
    flow: "refresh_token",
    connector: stored.connector,
  };
}

/** Why a refresh token that was not used could not be rotated: what changed since it was read. */
async function notRotated(
  { store }: Pick<Keyfob, "store">,
  client: AuthenticatedClient,
  stored: RefreshTokenRow,
  current: RefreshTokenRow | undefined,
): Promise<OAuthError> {
  if (current && !current.client.enabled) return invalidClient("unknown or disabled client");
  if (current && !current.client.refreshTokensAllowed)
    return new OAuthError("unauthorized_client", "this client is no longer allowed refresh tokens");
  if (current && client.secretHash !== undefined && (await store.clients.findForTokens(client.id))?.secretHash !== client.secretHash)
    return invalidClient("client authentication failed: the client's secret was replaced while the request was handled");
  const account = await store.accounts.find(stored.accountId);
  if (!account || account.blockedAt) return invalidGrant(`the refresh token's account ${account ? "is blocked" : "no longer exists"}`);
  return invalidGrant("the refresh token has been revoked or has expired");
}

/** A used refresh token presented again: revokes its family and the access tokens issued with it, audits, and refuses. */
async function reused(keyfob: Pick<Keyfob, "clock" | "store" | "audit">, token: RefreshTokenRow, caller: Caller): Promise<OAuthError> {
  const revoked = await keyfob.store.tokens.revokeRefreshFamilies({ familyId: token.familyId }, keyfob.clock.now());
  await keyfob.audit.write({
    action: "refresh_token.reused",
    outcome: "invalid_grant",
    clientId: token.clientId,
    accountId: token.accountId,
    ip: caller.ip,
    detail: `family ${token.familyId}: ${revoked.refreshTokens} refresh and ${revoked.accessTokens} access tokens revoked`,
  });
  return invalidGrant("the refresh token has already been used; every token of its grant is revoked");
}
