import { Prisma, type Database } from "../db/client";
import { revokeRefreshFamilies, type RefreshGrant } from "./refresh";

/** What to record of an access token, so it can be revoked, introspected and listed. */
export type TokenRecord = { jti: string; userId: string; connector: string; scope: string; expiresAt: Date };

/**
 * Consumes an authorization code and records the token issued from it, in one statement: of
 * concurrent redemptions exactly one sees a row, and the token remembers its code, so reusing the
 * code finds it to revoke. With offline_access granted, the same statement stores the first
 * refresh token of a new family, and the access token remembers the family. (Flow A's state:
 * lib/db/flow-a.ts.)
 */
export async function consumeCode(
  db: Database,
  codeHash: string,
  token: TokenRecord,
  now = new Date(),
  refresh?: { tokenHash: string; grant: RefreshGrant },
): Promise<boolean> {
  const storeRefresh = refresh
    ? Prisma.sql`, refresh AS (
        INSERT INTO refresh_tokens (token_hash, family_id, client_id, account_id, connector, scope, email, email_verified, auth_time, amr, issued_at, expires_at, family_expires_at)
        SELECT ${refresh.tokenHash}, ${refresh.grant.familyId}, client_id, ${token.userId}, ${token.connector}, ${refresh.grant.scope}, ${refresh.grant.email},
               ${refresh.grant.emailVerified}, ${refresh.grant.authTime}, ${refresh.grant.amr}, ${now}, ${refresh.grant.expiresAt}, ${refresh.grant.familyExpiresAt}
        FROM consumed
      )`
    : Prisma.empty;
  const rows = await db.$queryRaw<unknown[]>`
    WITH consumed AS (
      UPDATE authorization_codes SET used_at = ${now}
      WHERE code_hash = ${codeHash} AND used_at IS NULL AND expires_at > ${now}
      RETURNING client_id
    )${storeRefresh}
    INSERT INTO issued_tokens (jti, client_id, user_id, connector, scope, code_hash, refresh_family, issued_at, expires_at)
    SELECT ${token.jti}, client_id, ${token.userId}, ${token.connector}, ${token.scope}, ${codeHash}, ${refresh?.grant.familyId ?? null}, ${now}, ${token.expiresAt} FROM consumed
    RETURNING jti`;
  return rows.length === 1;
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
