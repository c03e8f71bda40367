import type { RequestColumn } from "./batch";
import { utcTypes, type Connection } from "./connection";
import type { AuthorizationCodeRow, AuthorizationCodeStore, CodeRedemption } from "./contract";
import { ACCOUNT_ACTIVE, grantRedeemer, type GrantRequest } from "./grants";

/**
 * Authorization codes: issued by a completed login (lib/interactions), redeemed once at /token.
 * The exchange's statements are plain SQL on the pool, as named (prepared) statements (see
 * docs/decisions/2026-11-21-hot-statements-in-plain-sql.md); the redemption is batched
 * (./grants.ts, lib/store/batch.ts).
 */

export function authorizationCodeStatements({ db, pool }: Connection): AuthorizationCodeStore {
  const redeemCodes = grantRedeemer(pool, "redeem_codes", REDEEM_CODE);
  return {
    async create(data) {
      await db.authorizationCode.create({ data });
    },

    async find(codeHash) {
      const { rows } = await pool.query<AuthorizationCodeRow>({
        name: "keyfob_find_code",
        text: `SELECT client_id AS "clientId", redirect_uri AS "redirectUri", account_id AS "accountId", connector, scope, nonce,
                      code_challenge AS "codeChallenge", email, email_verified AS "emailVerified", auth_time AS "authTime", amr,
                      session_id AS "sessionId", dpop_jkt AS "dpopJkt", resource, expires_at AS "expiresAt", used_at AS "usedAt"
               FROM authorization_codes WHERE code_hash = $1`,
        values: [codeHash],
        types: utcTypes,
      });
      return rows[0];
    },

    /** One conditional update: only an unused row is changed, so one call of concurrent ones gets it. */
    async use(codeHash, now) {
      const { count } = await db.authorizationCode.updateMany({
        where: { codeHash, usedAt: null, expiresAt: { gt: now } },
        data: { usedAt: now },
      });
      return count === 1;
    },

    /**
     * One statement, not a read first: see docs/decisions/2026-11-24-code-redeemed-in-one-statement.md
     * Concurrent redemptions go in one statement (batched, lib/store/batch.ts), each checked alone.
     */
    redeem(redemption, caller, now) {
      return redeemCodes({ hash: redemption.codeHash, redemption, caller, now });
    },
  };
}

/** An authorization code, used once: this client's, unused, unexpired, for this redirect URI, PKCE verifier, DPoP key and resource. */
const REDEEM_CODE = {
  columns: [
    ["redirect_uri", "text", (r) => r.redemption.redirectUri],
    ["verifier_challenge", "text", (r) => r.redemption.verifierChallenge],
    ["confidential", "boolean", (r) => r.redemption.confidential],
    ["proof_jkt", "text", (r) => r.redemption.proofJkt],
    ["resource", "text", (r) => r.redemption.resource],
  ] as RequestColumn<GrantRequest<CodeRedemption>>[],
  sql: `UPDATE authorization_codes a SET used_at = r.at
    FROM req r, clients c
    WHERE a.code_hash = r.hash AND a.client_id = r.request_client AND a.used_at IS NULL AND a.expires_at > r.at AND a.redirect_uri = r.redirect_uri
      AND a.code_challenge IS NOT DISTINCT FROM r.verifier_challenge AND (a.code_challenge IS NOT NULL OR r.confidential)
      AND (a.dpop_jkt IS NULL OR a.dpop_jkt = r.proof_jkt)
      AND (r.resource IS NULL OR a.resource = r.resource)
      AND c.id = a.client_id AND c.enabled AND (NOT r.secret_checked OR c.secret_hash IS NOT DISTINCT FROM r.secret_hash)
      AND ${ACCOUNT_ACTIVE("a.account_id")}
    RETURNING r.i, a.client_id, a.session_id, a.account_id, a.connector, a.scope, a.nonce, a.email, a.email_verified, a.auth_time, a.amr,
      a.resource, a.expires_at, c.refresh_tokens_allowed`,
};
