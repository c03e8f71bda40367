import { createHash, randomUUID } from "node:crypto";
import { SignJWT, type JWTPayload } from "jose";
import { withoutOfflineAccess, type Scope } from "../oauth/scope";
import type { SigningAlg, SigningKey } from "../keys/keystore";
import { encodeSubject } from "./sub";
import { inSpan } from "../tracing";

/** The JOSE `typ` of access tokens (RFC 9068 2.1). */
export const ACCESS_TOKEN_TYPE = "at+jwt";

/** Signs with the current key of an alg (the set's default, RS256, unless given). */
export type TokenSigner = { signingKey(alg?: SigningAlg): Promise<SigningKey> };

/** Who the tokens are for, and what the client asked to know. */
export type Grant = {
  clientId: string;
  /** The account's id (a 0x address) and the connector it logged in with: web3, google or apple. */
  userId: string;
  connector: string;
  scope: Scope[];
  ethereumAddress: string;
  nonce?: string;
  email?: string;
  emailVerified: boolean;
  /** The `profile` scope's claims: the address's ENS name and avatar as a login kept them (lib/ens/profiles.ts). */
  profile?: ProfileClaims;
  /** When and how the user authenticated (Flow B): the ID token's auth_time and amr. */
  authTime?: Date;
  amr?: string[];
  /** The login session's `sid` (Back-Channel Logout 1.0 2.1), when the tokens come from one. */
  sid?: string;
  /**
   * A refresh token comes with these tokens. Only then does the access token's scope keep
   * offline_access: a flow that issues none (Flow A) never grants it.
   */
  offlineAccess?: boolean;
  /** The thumbprint of the DPoP key the access token is bound to (RFC 9449 6): its `cnf.jkt`. */
  jkt?: string;
  /** The resource the access token is for (RFC 8707): its `aud` (RFC 9068 3); without one, the client is. */
  resource?: string;
  /** The client's id_token_signed_response_alg (RFC 7591 2), which its access token is signed with too; RS256 when not given. */
  signingAlg?: SigningAlg;
};

/** preferred_username and picture (OpenID Connect Core 5.1), each when known. */
export type ProfileClaims = { preferredUsername?: string; picture?: string };

export type TokenResponse = {
  access_token: string;
  token_type: TokenType;
  expires_in: number;
  id_token: string;
  /** Code exchange and refresh only: with offline_access granted, and `scope` when it differs from the request (RFC 6749 5.1). */
  refresh_token?: string;
  scope?: string;
};

/**
 * `bearer`, as Flow A's clients have always been answered, or `DPoP` for a token bound to a key
 * (RFC 9449 5); token types are case-insensitive (RFC 6749 5.1).
 */
export type TokenType = "bearer" | "DPoP";

/** The access token's confirmation claim (RFC 7800, RFC 9449 6.1) and the type the response names. */
export const binding = (jkt: string | undefined) => (jkt === undefined ? {} : { cnf: { jkt } });
export const tokenType = (jkt: string | undefined): TokenType => (jkt === undefined ? "bearer" : "DPoP");

/** The flows keyfob_tokens_issued_total counts issued tokens under. */
export type TokenFlow = "wallet_signature" | "code_exchange" | "refresh_token" | "client_credentials" | "device_code" | "token_exchange";

/**
 * What an action that issues tokens returns: the response for the client, and what the metrics
 * count it under (its flow, and the connector its subject logged in with).
 */
export type Issued<R = TokenResponse> = { response: R; flow: TokenFlow; connector: string };

/** at_hash (OIDC Core 3.1.3.6): base64url of the left half of the SHA-256 of the access token. */
export function accessTokenHash(accessToken: string): string {
  return createHash("sha256").update(accessToken).digest().subarray(0, 16).toString("base64url");
}

/** Lifetimes in seconds: the access token's is `expires_in`; the ID token's may be shorter. */
export type TokenLifetimes = { accessToken: number; idToken: number };

export const tokenLifetimes = (config: { accessTokenTtl: number; idTokenTtl: number }): TokenLifetimes => ({
  accessToken: config.accessTokenTtl,
  idToken: config.idTokenTtl,
});

/** An access token's id and times, fixed before it is signed when the statement that records it runs first. */
export type AccessTokenId = { jti: string; iat: number; expiresAt: Date };

export function newAccessTokenId(lifetimes: TokenLifetimes, now: number): AccessTokenId {
  const iat = Math.floor(now / 1000);
  return { jti: randomUUID(), iat, expiresAt: new Date((iat + lifetimes.accessToken) * 1000) };
}

/**
 * The access token alone, as issueTokens signs it (it lives lifetimes.accessToken, as `id` says):
 * for a grant that issues no ID token (client_credentials for a license, lib/actions/client-credentials.ts).
 */
export async function issueAccessToken(
  signer: TokenSigner,
  issuer: string,
  lifetimes: TokenLifetimes,
  grant: Grant,
  id: AccessTokenId,
): Promise<string> {
  return (await signedAccessToken(signer, issuer, lifetimes.accessToken, grant, id)).accessToken;
}

/** The claims the access and ID tokens share, the signature of either, and the access token signed. */
async function signedAccessToken(signer: TokenSigner, issuer: string, lifetime: number, grant: Grant, id: AccessTokenId) {
  const { kid, alg, privateKey } = await signer.signingKey(grant.signingAlg);
  const { jti, iat } = id;
  const exp = iat + lifetime;
  const claims: JWTPayload = {
    iss: issuer,
    sub: encodeSubject({ userId: grant.userId, connector: grant.connector }),
    aud: grant.clientId,
    iat,
    provider_id: grant.connector,
    ...(grant.scope.includes("email") && {
      ethereum_address: grant.ethereumAddress,
      ...(grant.email !== undefined && { email: grant.email }),
    }),
    email_verified: grant.emailVerified,
    ...(grant.scope.includes("profile") && {
      ...(grant.profile?.preferredUsername !== undefined && { preferred_username: grant.profile.preferredUsername }),
      ...(grant.profile?.picture !== undefined && { picture: grant.profile.picture }),
    }),
    ...(grant.nonce !== undefined && { nonce: grant.nonce }),
  };
  const sign = (payload: JWTPayload, typ?: string) =>
    inSpan(`sign ${typ ?? "id_token"}`, { "keyfob.alg": alg, "keyfob.kid": kid }, () =>
      new SignJWT(payload).setProtectedHeader({ alg, kid, ...(typ && { typ }) }).sign(privateKey),
    );

  const scope = grant.offlineAccess ? grant.scope : withoutOfflineAccess(grant.scope);
  const accessToken = await sign(
    {
      ...claims,
      ...(grant.resource !== undefined && { aud: grant.resource }),
      exp,
      client_id: grant.clientId,
      jti,
      scope: scope.join(" "),
      ...binding(grant.jkt),
    },
    ACCESS_TOKEN_TYPE,
  );
  return { kid, sign, claims, accessToken };
}

/**
 * Issues an access token and an ID token (the client's alg, RS256 by default, with kid) carrying the platform's claims. The
 * access token is typed `at+jwt` and names its client (RFC 9068), so that a resource server can
 * tell it from an ID token.
 */
export async function issueTokens(
  signer: TokenSigner,
  issuer: string,
  lifetimes: TokenLifetimes,
  grant: Grant,
  id: AccessTokenId,
): Promise<{ response: TokenResponse; jti: string; kid: string; expiresAt: Date }> {
  const { kid, sign, claims, accessToken } = await signedAccessToken(signer, issuer, lifetimes.accessToken, grant, id);
  const { jti, iat } = id;
  const exp = iat + lifetimes.accessToken;
  const idToken = await sign({
    ...claims,
    exp: iat + lifetimes.idToken,
    jti: randomUUID(),
    at_hash: accessTokenHash(accessToken),
    ...(grant.authTime && { auth_time: Math.floor(grant.authTime.getTime() / 1000) }),
    ...(grant.amr && { amr: grant.amr }),
    ...(grant.sid && { sid: grant.sid }),
  });
  return {
    response: { access_token: accessToken, token_type: tokenType(grant.jkt), expires_in: lifetimes.accessToken, id_token: idToken },
    jti,
    kid,
    expiresAt: new Date(exp * 1000),
  };
}
