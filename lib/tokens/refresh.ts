import { createHmac, randomUUID } from "node:crypto";
import { opaqueDigest, randomOpaque } from "../oauth/opaque";
import type { RefreshTokenRow } from "../store/contract";

/**
 * Refresh tokens (OpenID Connect Core 11 offline_access, RFC 6749 6, RFC 9700 4.14.2). A token is
 * 256 random bits, handed to the client once and stored only as its SHA-256. Every use rotates it:
 * the presented row is marked used and a successor of the same family is stored, in the statement
 * that records the new access token. The family (every rotation of one login's grant) shares the
 * grant's claims and an absolute end; each token also ends after REFRESH_TOKEN_IDLE_TTL unused.
 * A used token presented again means two parties hold the family: the whole family is revoked,
 * with every access token issued from it (IssuedToken.refreshFamily). Except within
 * REFRESH_TOKEN_REUSE_GRACE of its use, for an app that refreshed twice at once: then it is answered
 * with the successor its first use got, which is why a successor is derived from the token it
 * replaces (docs/decisions/2026-11-28-refresh-reuse-grace.md).
 */

/** A new refresh token: the value for the client, the digest for the database. */
export type NewRefreshToken = { value: string; tokenHash: string };

/** A family's first token: random. */
export function newRefreshToken(): NewRefreshToken {
  return refreshToken(randomOpaque());
}

/**
 * The successor of `presented`: its MAC under a key derived from KEYFOB_SECRET, so every use of one
 * token, on any instance, names the same successor, and nobody without the secret can tell it.
 */
export function successorToken(key: Uint8Array, presented: string): NewRefreshToken {
  return refreshToken(createHmac("sha256", key).update(presented).digest("base64url"));
}

const refreshToken = (value: string): NewRefreshToken => ({ value, tokenHash: opaqueDigest(value) });

export type RefreshLifetimes = { refreshTokenIdleTtl: number; refreshTokenMaxAge: number };

/** A new family's id and ends: its first token ends unused after the idle lifetime, the family at the maximum age. */
export function newFamily(config: RefreshLifetimes, now: Date): Pick<RefreshTokenRow, "familyId" | "expiresAt" | "familyExpiresAt"> {
  const familyExpiresAt = new Date(now.getTime() + config.refreshTokenMaxAge * 1000);
  return { familyId: randomUUID(), familyExpiresAt, expiresAt: successorExpiry(config, familyExpiresAt, now) };
}

/** A successor's end: the idle lifetime from now, never past its family's end. */
export function successorExpiry(config: RefreshLifetimes, familyExpiresAt: Date, now: Date): Date {
  return new Date(Math.min(now.getTime() + config.refreshTokenIdleTtl * 1000, familyExpiresAt.getTime()));
}

/** Whether a used refresh token was used recently enough (REFRESH_TOKEN_REUSE_GRACE) to be answered with its successor again. */
export function withinReuseGrace(config: { refreshTokenReuseGrace: number }, usedAt: Date, now: Date): boolean {
  return config.refreshTokenReuseGrace > 0 && now.getTime() - usedAt.getTime() < config.refreshTokenReuseGrace * 1000;
}

/** Whether a refresh token can be used now: unused, unrevoked, within both ends, its client enabled and still allowed refresh tokens. */
export function isLive(token: RefreshTokenRow, now: Date): boolean {
  return (
    token.usedAt === null &&
    token.revokedAt === null &&
    token.expiresAt > now &&
    token.familyExpiresAt > now &&
    token.client.enabled &&
    token.client.refreshTokensAllowed
  );
}
