import type { Database } from "../db/client";

/** What to record of an access token, so it can be revoked, introspected and listed. */
export type TokenRecord = { jti: string; userId: string; connector: string; scope: string; expiresAt: Date };

/**
 * Consumes an authorization code and records the token issued from it, in one statement: of
 * concurrent redemptions exactly one sees a row, and the token remembers its code, so reusing the
 * code finds it to revoke. (Flow A's state: lib/db/flow-a.ts.)
 */
export async function consumeCode(db: Database, codeHash: string, token: TokenRecord, now = new Date()): Promise<boolean> {
  const rows = await db.$queryRaw<unknown[]>`
    WITH consumed AS (
      UPDATE authorization_codes SET used_at = ${now}
      WHERE code_hash = ${codeHash} AND used_at IS NULL AND expires_at > ${now}
      RETURNING client_id
    )
    INSERT INTO issued_tokens (jti, client_id, user_id, connector, scope, code_hash, issued_at, expires_at)
    SELECT ${token.jti}, client_id, ${token.userId}, ${token.connector}, ${token.scope}, ${codeHash}, ${now}, ${token.expiresAt} FROM consumed
    RETURNING jti`;
  return rows.length === 1;
}

/** Revokes every token issued from an authorization code (RFC 6749 4.1.2, code reuse). */
export async function revokeTokensOfCode(db: Database, codeHash: string): Promise<number> {
  const { count } = await db.issuedToken.updateMany({ where: { codeHash, revokedAt: null }, data: { revokedAt: new Date() } });
  return count;
}
