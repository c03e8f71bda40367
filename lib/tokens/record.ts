import type pg from "pg";
import { utc, utcTypes, type Database } from "../db/client";
import { ADMIN_SCOPE } from "../admin/scopes";
import { callerValues, issuedWithEvent, type Caller } from "../audit";
import { revokeRefreshFamilies, type RefreshGrant } from "./refresh";

/** What to record of an access token, so it can be revoked, introspected and listed. */
export type TokenRecord = { jti: string; userId: string; connector: string; scope: string; expiresAt: Date };

/**
 * The code exchange's two statements run in plain SQL on the pool under Prisma, as named (prepared)
 * statements: Prisma's query compilation cost more than the rest of the exchange's database work
 * (bench/README.md). (Flow A's: lib/db/flow-a.ts.)
 */

/** An authorization code as the exchange reads it (the AuthorizationCode model's fields). */
export type StoredCode = {
  clientId: string;
  redirectUri: string;
  accountId: string;
  connector: string;
  scope: string;
  nonce: string | null;
  codeChallenge: string | null;
  email: string | null;
  emailVerified: boolean;
  authTime: Date | null;
  amr: string | null;
  expiresAt: Date;
  usedAt: Date | null;
};

export async function findCode(pool: pg.Pool, codeHash: string): Promise<StoredCode | undefined> {
  const { rows } = await pool.query<StoredCode>({
    name: "keyfob_find_code",
    text: `SELECT client_id AS "clientId", redirect_uri AS "redirectUri", account_id AS "accountId", connector, scope, nonce,
                  code_challenge AS "codeChallenge", email, email_verified AS "emailVerified", auth_time AS "authTime", amr,
                  expires_at AS "expiresAt", used_at AS "usedAt"
           FROM authorization_codes WHERE code_hash = $1`,
    values: [codeHash],
    types: utcTypes,
  });
  return rows[0];
}

/**
 * Consumes an authorization code and records the token issued from it with its audit event, in
 * one statement (issuedWithEvent): of concurrent redemptions exactly one sees a row, and the token remembers its code, so reusing the
 * code finds it to revoke. With offline_access granted, the same statement stores the first
 * refresh token of a new family, and the access token remembers the family.
 *
 * The statement also checks, at the moment it runs, that the client is still enabled and, when
 * `client.secretHash` is given, that its secret is still the one the request was authenticated
 * with: the client may have been read from a cache (lib/clients/cache.ts), and a client disabled or
 * given a new secret must not get tokens from the next request on. False when any check fails.
 */
export async function consumeCode(
  pool: pg.Pool,
  codeHash: string,
  token: TokenRecord,
  caller: Caller,
  now = new Date(),
  refresh?: { tokenHash: string; grant: RefreshGrant },
  client: { secretHash?: string | null } = {},
): Promise<boolean> {
  const values: unknown[] = [
    codeHash,
    utc(now),
    token.jti,
    token.userId,
    token.connector,
    token.scope,
    utc(token.expiresAt),
    refresh?.grant.familyId ?? null,
    client.secretHash !== undefined,
    client.secretHash ?? null,
    ...callerValues(caller),
  ];
  if (!refresh) {
    const { rowCount } = await pool.query({ name: "keyfob_consume_code", text: CONSUME_CODE, values });
    return rowCount === 1;
  }
  const { grant } = refresh;
  const { rowCount } = await pool.query({
    name: "keyfob_consume_code_with_refresh",
    text: CONSUME_CODE_WITH_REFRESH,
    values: [...values, refresh.tokenHash, grant.scope, grant.email, grant.emailVerified, utc(grant.authTime), grant.amr, utc(grant.expiresAt), utc(grant.familyExpiresAt)],
  });
  return rowCount === 1;
}

const CODE_CONSUMED = `WITH consumed AS (
    UPDATE authorization_codes a SET used_at = $2
    WHERE a.code_hash = $1 AND a.used_at IS NULL AND a.expires_at > $2
      AND EXISTS (SELECT 1 FROM clients c WHERE c.id = a.client_id AND c.enabled AND (NOT $9::boolean OR c.secret_hash IS NOT DISTINCT FROM $10::text))
    RETURNING a.client_id
  )`;
const CODE_TOKEN_ISSUED = issuedWithEvent(
  `INSERT INTO issued_tokens (jti, client_id, user_id, connector, scope, code_hash, refresh_family, issued_at, expires_at)
   SELECT $3, client_id, $4, $5, $6, $1, $8, $2, $7 FROM consumed`,
  { at: 2, endpoint: 11, ip: 12 },
);
const CONSUME_CODE = `${CODE_CONSUMED}, ${CODE_TOKEN_ISSUED}`;
const CONSUME_CODE_WITH_REFRESH = `${CODE_CONSUMED}, refresh AS (
    INSERT INTO refresh_tokens (token_hash, family_id, client_id, account_id, connector, scope, email, email_verified, auth_time, amr, issued_at, expires_at, family_expires_at)
    SELECT $13, $8, client_id, $4, $5, $14, $15, $16, $17, $18, $2, $19, $20 FROM consumed
  ), ${CODE_TOKEN_ISSUED}`;

/**
 * Records a client_credentials token (RFC 6749 4.4) with its audit event, if the client is, at the moment the statement
 * runs, still enabled, still allowed the management API with the token's scopes, and still has the
 * secret the request was authenticated with (it may have been read from the cache). False when any
 * of these fails.
 */
export async function recordClientToken(
  pool: pg.Pool,
  clientId: string,
  secretHash: string,
  scopes: string[],
  token: TokenRecord,
  caller: Caller,
  now = new Date(),
): Promise<boolean> {
  const { rowCount } = await pool.query({
    name: "keyfob_record_client_token",
    text: `WITH ${issuedWithEvent(
      `INSERT INTO issued_tokens (jti, client_id, user_id, connector, scope, issued_at, expires_at)
       SELECT $3, c.id, $4, $5, $6, $7, $8 FROM clients c
       WHERE c.id = $1 AND c.enabled AND c.management_api AND c.secret_hash = $2
         AND (c.management_scopes @> $9::text[] OR $10 = ANY (c.management_scopes))`,
      { at: 7, endpoint: 11, ip: 12 },
    )}`,
    values: [clientId, secretHash, token.jti, token.userId, token.connector, token.scope, utc(now), utc(token.expiresAt), scopes, ADMIN_SCOPE, ...callerValues(caller)],
  });
  return rowCount === 1;
}

/**
 * Revokes every token issued from an authorization code (RFC 6749 4.1.2, code reuse): its access
 * token, and the refresh-token family started with it (every rotation, and the access tokens they
 * were issued with). Returns how many access tokens were revoked.
 */
export async function revokeTokensOfCode(db: Database, codeHash: string): Promise<number> {
  const now = new Date();
  const issued = await db.issuedToken.findMany({ where: { codeHash, refreshFamily: { not: null } }, select: { refreshFamily: true } });
  let count = 0;
  for (const familyId of new Set(issued.map((token) => token.refreshFamily!))) {
    count += (await revokeRefreshFamilies(db, { familyId }, now)).accessTokens;
  }
  count += (await db.issuedToken.updateMany({ where: { codeHash, revokedAt: null }, data: { revokedAt: now } })).count;
  return count;
}
