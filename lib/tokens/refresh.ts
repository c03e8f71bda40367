import { randomUUID } from "node:crypto";
import type pg from "pg";
import { callerValues, issuedWithEvent, type Caller } from "../audit";
import { Prisma, utc, type Database } from "../db/client";
import { opaqueDigest, randomOpaque } from "../oauth/opaque";
import type { TokenRecord } from "./record";

/**
 * Refresh tokens (OpenID Connect Core 11 offline_access, RFC 6749 6, RFC 9700 4.14.2). A token is
 * 256 random bits, handed to the client once and stored only as its SHA-256. Every use rotates it:
 * the presented row is marked used and a successor of the same family is stored, in the statement
 * that records the new access token. The family (every rotation of one login's grant) shares the
 * grant's claims and an absolute end; each token also ends after REFRESH_TOKEN_IDLE_TTL unused.
 * A used token presented again means two parties hold the family: the whole family is revoked,
 * with every access token issued from it (IssuedToken.refreshFamily).
 */

/** A new refresh token: the value for the client, the digest for the database. */
export type NewRefreshToken = { value: string; tokenHash: string };

export function newRefreshToken(): NewRefreshToken {
  const value = randomOpaque();
  return { value, tokenHash: opaqueDigest(value) };
}

/** What a family carries from the login to every rotation: the stored grant behind each new token. */
export type RefreshGrant = {
  familyId: string;
  scope: string;
  email: string | null;
  emailVerified: boolean;
  authTime: Date;
  /** Space separated; empty when the login recorded none. */
  amr: string;
  expiresAt: Date;
  familyExpiresAt: Date;
};

export type RefreshLifetimes = { refreshTokenIdleTtl: number; refreshTokenMaxAge: number };

/** The first token of a new family: it ends unused after the idle lifetime, the family at the maximum age. */
export function newFamily(config: RefreshLifetimes, grant: Pick<RefreshGrant, "scope" | "email" | "emailVerified" | "authTime" | "amr">, now: Date): RefreshGrant {
  const familyExpiresAt = new Date(now.getTime() + config.refreshTokenMaxAge * 1000);
  return { ...grant, familyId: randomUUID(), familyExpiresAt, expiresAt: successorExpiry(config, familyExpiresAt, now) };
}

/** A successor's end: the idle lifetime from now, never past its family's end. */
export function successorExpiry(config: RefreshLifetimes, familyExpiresAt: Date, now: Date): Date {
  return new Date(Math.min(now.getTime() + config.refreshTokenIdleTtl * 1000, familyExpiresAt.getTime()));
}

/** A stored refresh token with what the checks need of its client. */
export function findRefreshToken(db: Database, tokenHash: string) {
  return db.refreshToken.findUnique({ where: { tokenHash }, include: { client: { select: { enabled: true, refreshTokensAllowed: true } } } });
}
export type StoredRefreshToken = NonNullable<Awaited<ReturnType<typeof findRefreshToken>>>;

/** Whether a refresh token can be used now: unused, unrevoked, within both ends, its client enabled and still allowed refresh tokens. */
export function isLive(token: StoredRefreshToken, now = new Date()): boolean {
  return (
    token.usedAt === null &&
    token.revokedAt === null &&
    token.expiresAt > now &&
    token.familyExpiresAt > now &&
    token.client.enabled &&
    token.client.refreshTokensAllowed
  );
}

/**
 * Uses a refresh token, in one statement: marks it used, stores its successor (same family and
 * grant, a new idle end) and records the access token issued with it, with its audit event
 * (issuedWithEvent). The row must still be live
 * and its client enabled, allowed refresh tokens and (when `presented.secretHash` is given, the
 * client having been read from a cache) still holding the secret the request was authenticated
 * with, when the statement runs, so of concurrent uses of one token exactly one sees a row; the
 * others find it used (reuse). A named statement on the pool, as the code exchange's (lib/tokens/record.ts).
 */
export async function rotateRefreshToken(
  pool: pg.Pool,
  presented: { tokenHash: string; clientId: string; secretHash?: string | null },
  successor: { tokenHash: string; expiresAt: Date },
  token: Pick<TokenRecord, "jti" | "scope" | "expiresAt">,
  caller: Caller,
  now = new Date(),
): Promise<boolean> {
  const { rowCount } = await pool.query({
    name: "keyfob_rotate_refresh_token",
    text: ROTATE_REFRESH_TOKEN,
    values: [
      presented.tokenHash,
      presented.clientId,
      utc(now),
      successor.tokenHash,
      utc(successor.expiresAt),
      token.jti,
      token.scope,
      utc(token.expiresAt),
      presented.secretHash !== undefined,
      presented.secretHash ?? null,
      ...callerValues(caller),
    ],
  });
  return rowCount === 1;
}

const ROTATE_REFRESH_TOKEN = `WITH used AS (
    UPDATE refresh_tokens t SET used_at = $3
    WHERE t.token_hash = $1 AND t.client_id = $2
      AND t.used_at IS NULL AND t.revoked_at IS NULL AND t.expires_at > $3 AND t.family_expires_at > $3
      AND EXISTS (SELECT 1 FROM clients c WHERE c.id = t.client_id AND c.enabled AND c.refresh_tokens_allowed
                  AND (NOT $9::boolean OR c.secret_hash IS NOT DISTINCT FROM $10::text))
    RETURNING t.family_id, t.client_id, t.account_id, t.connector, t.scope, t.email, t.email_verified, t.auth_time, t.amr, t.family_expires_at
  ), successor AS (
    INSERT INTO refresh_tokens (token_hash, family_id, client_id, account_id, connector, scope, email, email_verified, auth_time, amr, issued_at, expires_at, family_expires_at)
    SELECT $4, family_id, client_id, account_id, connector, scope, email, email_verified, auth_time, amr, $3, $5, family_expires_at FROM used
  ), ${issuedWithEvent(
    `INSERT INTO issued_tokens (jti, client_id, user_id, connector, scope, refresh_family, issued_at, expires_at)
     SELECT $6, client_id, account_id, connector, $7, family_id, $3, $8 FROM used`,
    { at: 3, endpoint: 11, ip: 12 },
  )}`;

/** Which refresh tokens to revoke: one family, or every family of a client and/or an account. */
export type FamilySelector = { familyId?: string; clientId?: string; accountId?: string };

export type FamilyRevocation = {
  /** Families that still had a usable token. */
  families: number;
  refreshTokens: number;
  accessTokens: number;
};

/**
 * Revokes refresh-token families and every access token issued with them. Each pass is one
 * statement for both tables; passes repeat until one finds nothing left, because a rotation that
 * committed while a pass ran adds a successor (and an access token) that pass could not see, and
 * a later rotation needs a live row, which a pass that changed nothing proves there is none of.
 */
export async function revokeRefreshFamilies(db: Database, selector: FamilySelector, now = new Date()): Promise<FamilyRevocation> {
  const { familyId, clientId, accountId } = selector;
  if (familyId === undefined && clientId === undefined && accountId === undefined) throw new Error("revokeRefreshFamilies needs a family, a client or an account");
  const refreshWhere = Prisma.join(
    [
      Prisma.sql`revoked_at IS NULL`,
      ...(familyId !== undefined ? [Prisma.sql`family_id = ${familyId}`] : []),
      ...(clientId !== undefined ? [Prisma.sql`client_id = ${clientId}`] : []),
      ...(accountId !== undefined ? [Prisma.sql`account_id = ${accountId}`] : []),
    ],
    " AND ",
  );
  const accessWhere = Prisma.join(
    [
      Prisma.sql`revoked_at IS NULL AND refresh_family IS NOT NULL`,
      ...(familyId !== undefined ? [Prisma.sql`refresh_family = ${familyId}`] : []),
      ...(clientId !== undefined ? [Prisma.sql`client_id = ${clientId}`] : []),
      ...(accountId !== undefined ? [Prisma.sql`user_id = ${accountId}`] : []),
    ],
    " AND ",
  );
  const total: FamilyRevocation = { families: 0, refreshTokens: 0, accessTokens: 0 };
  for (let pass = 0; pass < 10; pass++) {
    const [counts] = await db.$queryRaw<{ refresh: number; families: number; access: number }[]>`
      WITH r AS (
        UPDATE refresh_tokens SET revoked_at = ${now} WHERE ${refreshWhere}
        RETURNING family_id, (used_at IS NULL AND expires_at > ${now} AND family_expires_at > ${now}) AS live
      ), a AS (
        UPDATE issued_tokens SET revoked_at = ${now} WHERE ${accessWhere} RETURNING 1
      )
      SELECT (SELECT count(*) FROM r)::int AS refresh,
             (SELECT count(DISTINCT family_id) FROM r WHERE live)::int AS families,
             (SELECT count(*) FROM a)::int AS access`;
    total.families += counts.families;
    total.refreshTokens += counts.refresh;
    total.accessTokens += counts.access;
    if (counts.refresh === 0) break;
  }
  return total;
}
