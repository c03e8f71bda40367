import type { Prisma } from "../db/generated/client";
import type { Caller } from "./audit";
import type { RequestColumn } from "./batch";
import { utcTypes, type Connection } from "./connection";
import { ACCOUNT_ACTIVE, grantRedeemer, type GrantRedemption, type GrantRequest, type RedeemedGrant } from "./grants";

/**
 * Authorization codes: issued by a completed login (lib/interactions), redeemed once at /token.
 * The exchange's statements are plain SQL on the pool, as named (prepared) statements (see
 * docs/decisions/2026-11-21-hot-statements-in-plain-sql.md); the redemption is batched
 * (./grants.ts, lib/store/batch.ts).
 */

/** An authorization code as the exchange reads it (the AuthorizationCode model's fields). */
export type CodeRow = {
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
  sessionId: string | null;
  /** The DPoP key (thumbprint) the authorization request bound the code to, if any (RFC 9449 10). */
  dpopJkt: string | null;
  expiresAt: Date;
  usedAt: Date | null;
};

/** A code redemption at /token: what the code must match besides. */
export type CodeRedemption = GrantRedemption & {
  codeHash: string;
  redirectUri: string;
  /** What the code's challenge must be for the request's code_verifier (expectedCodeChallenge). */
  verifierChallenge: string | null;
  /** Only a confidential client redeems a code issued without a code challenge. */
  confidential: boolean;
  /** The key of the request's DPoP proof: a code bound to a key (dpop_jkt, RFC 9449 10) needs it. */
  proofJkt: string | null;
};

export function authorizationCodeStatements({ db, pool }: Connection) {
  const redeemCodes = grantRedeemer(pool, "redeem_codes", REDEEM_CODE);
  return {
    async create(data: Prisma.AuthorizationCodeUncheckedCreateInput): Promise<void> {
      await db.authorizationCode.create({ data });
    },

    async find(codeHash: string): Promise<CodeRow | undefined> {
      const { rows } = await pool.query<CodeRow>({
        name: "keyfob_find_code",
        text: `SELECT client_id AS "clientId", redirect_uri AS "redirectUri", account_id AS "accountId", connector, scope, nonce,
                      code_challenge AS "codeChallenge", email, email_verified AS "emailVerified", auth_time AS "authTime", amr,
                      session_id AS "sessionId", dpop_jkt AS "dpopJkt", expires_at AS "expiresAt", used_at AS "usedAt"
               FROM authorization_codes WHERE code_hash = $1`,
        values: [codeHash],
        types: utcTypes,
      });
      return rows[0];
    },

    /** Uses an unused, unexpired code without issuing tokens (the dashboard's own sign-in); false when it was not. */
    async use(codeHash: string, now: Date): Promise<boolean> {
      const { count } = await db.authorizationCode.updateMany({
        where: { codeHash, usedAt: null, expiresAt: { gt: now } },
        data: { usedAt: now },
      });
      return count === 1;
    },

    /**
     * Redeems an authorization code in one statement, before its tokens are signed: the code is used
     * only if it is this client's, unused, unexpired, for this redirect URI and this PKCE verifier
     * (or none, for a confidential client), and its client still enabled with the secret it
     * authenticated with (the client may come from a cache, lib/clients/cache.ts). The same statement
     * records the access token with its audit event, the client as one that got tokens in the code's
     * login session (back-channel logout; a session that ended meanwhile queues the client's logout
     * token at once) and, when offline_access is granted (the client
     * allowed refresh tokens), the first refresh token of a new family. Of concurrent redemptions
     * exactly one gets the grant; the token remembers its code, so reusing the code finds it to
     * revoke. Undefined when any check fails. One statement, not a read first: see
     * docs/decisions/2026-11-24-code-redeemed-in-one-statement.md
     * Concurrent redemptions go in one statement (batched, lib/store/batch.ts), each checked alone.
     */
    redeem(redemption: CodeRedemption, caller: Caller, now = new Date()): Promise<RedeemedGrant | undefined> {
      return redeemCodes({ hash: redemption.codeHash, redemption, caller, now });
    },
  };
}

/** An authorization code, used once: this client's, unused, unexpired, for this redirect URI, PKCE verifier and DPoP key. */
const REDEEM_CODE = {
  columns: [
    ["redirect_uri", "text", (r) => r.redemption.redirectUri],
    ["verifier_challenge", "text", (r) => r.redemption.verifierChallenge],
    ["confidential", "boolean", (r) => r.redemption.confidential],
    ["proof_jkt", "text", (r) => r.redemption.proofJkt],
  ] as RequestColumn<GrantRequest<CodeRedemption>>[],
  sql: `UPDATE authorization_codes a SET used_at = r.at
    FROM req r, clients c
    WHERE a.code_hash = r.hash AND a.client_id = r.request_client AND a.used_at IS NULL AND a.expires_at > r.at AND a.redirect_uri = r.redirect_uri
      AND a.code_challenge IS NOT DISTINCT FROM r.verifier_challenge AND (a.code_challenge IS NOT NULL OR r.confidential)
      AND (a.dpop_jkt IS NULL OR a.dpop_jkt = r.proof_jkt)
      AND c.id = a.client_id AND c.enabled AND (NOT r.secret_checked OR c.secret_hash IS NOT DISTINCT FROM r.secret_hash)
      AND ${ACCOUNT_ACTIVE("a.account_id")}
    RETURNING r.i, a.client_id, a.session_id, a.account_id, a.connector, a.scope, a.nonce, a.email, a.email_verified, a.auth_time, a.amr,
      a.expires_at, c.refresh_tokens_allowed`,
};
