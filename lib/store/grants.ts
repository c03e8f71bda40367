import { callerValues, issuedWithEventCtes } from "./audit";
import { batched, byRequest, requestRows, SINGLE_USE_BATCHES, type Batched, type RequestColumn } from "./batch";
import { utc, utcTypes, type Connection } from "./connection";
import type { Caller, GrantRedemption, RedeemedGrant } from "./contract";

/**
 * What redeeming a login's grant shares, whichever grant it is (an authorization code,
 * ./authorization-codes.ts; an approved device code, ./device-authorizations.ts): the columns every
 * redemption takes of its request, the batched statement around the grant's own UPDATE, and what
 * that statement records besides (the client in the grant's login session, the refresh family, the
 * access token with its audit event). One statement: see
 * docs/decisions/2026-11-24-code-redeemed-in-one-statement.md; batched: lib/store/batch.ts.
 */

/** One redemption of a login's grant, as the statement over many takes it. */
export type GrantRequest<G extends GrantRedemption = GrantRedemption> = { hash: string; redemption: G; caller: Caller; now: Date };

/** What every grant's redemption takes of its request, as the columns of `req` (requestRows). */
const GRANT_COLUMNS: RequestColumn<GrantRequest>[] = [
  ["hash", "text", (r) => r.hash],
  ["at", "timestamp", (r) => utc(r.now)],
  ["request_client", "text", (r) => r.redemption.clientId],
  ["secret_checked", "boolean", (r) => r.redemption.secretHash !== undefined],
  ["secret_hash", "text", (r) => r.redemption.secretHash ?? null],
  ["jti", "text", (r) => r.redemption.token.jti],
  ["token_expires_at", "timestamp", (r) => utc(r.redemption.token.expiresAt)],
  ["refresh_hash", "text", (r) => r.redemption.refresh?.tokenHash ?? null],
  ["family_id", "text", (r) => r.redemption.refresh?.familyId ?? null],
  ["refresh_expires_at", "timestamp", (r) => (r.redemption.refresh ? utc(r.redemption.refresh.expiresAt) : null)],
  ["family_expires_at", "timestamp", (r) => (r.redemption.refresh ? utc(r.redemption.refresh.familyExpiresAt) : null)],
  ["code_ttl", "double precision", (r) => r.redemption.codeTtl],
  ["endpoint", "text", (r) => callerValues(r.caller)[0]],
  ["ip", "text", (r) => callerValues(r.caller)[1]],
  ["refresh_jkt", "text", (r) => r.redemption.refresh?.dpopJkt ?? null],
];

/**
 * Redeems logins' grants, many in one statement (batched): `head`, with columns of its own after
 * GRANT_COLUMNS, uses each request's row as the CTE `code` (with the request's `i` and its client's
 * refresh_tokens_allowed); GRANT_REDEEMED records what each gives. Undefined for a request whose
 * grant was not redeemed.
 */
export function grantRedeemer<G extends GrantRedemption>(
  pool: Connection["pool"],
  name: string,
  head: { columns: RequestColumn<GrantRequest<G>>[]; sql: string },
): Batched<GrantRequest<G>, RedeemedGrant | undefined> {
  const req = requestRows<GrantRequest<G>>([...GRANT_COLUMNS, ...head.columns]);
  const text = `WITH ${req.cte}, code AS (${head.sql}), ${SESSION_CLIENT_RECORDED}, ${GRANT_REDEEMED}`;
  return batched(
    name,
    async (requests) => {
      const { rows } = await pool.query<RedeemedGrant & { i: number }>({
        name: `keyfob_${name}`,
        text,
        values: req.values(requests),
        types: utcTypes,
      });
      return byRequest(requests.length, rows, undefined);
    },
    SINGLE_USE_BATCHES,
  );
}

/**
 * What redeeming a grant records, from the CTE `code` and its request: offline_access granted when
 * a refresh token was offered and the client is allowed them, the refresh family then, the access
 * token with its audit event; and what the tokens say, by request.
 */
const GRANT_REDEEMED = `granted AS (
    SELECT code.*, r.hash, r.at, r.jti, r.token_expires_at, r.refresh_hash, r.family_id, r.refresh_expires_at, r.family_expires_at,
           r.code_ttl, r.refresh_jkt, g.offline,
           CASE WHEN g.offline THEN code.scope ELSE array_to_string(array_remove(string_to_array(code.scope, ' '), 'offline_access'), ' ') END AS granted_scope
    FROM code JOIN req r USING (i),
         LATERAL (SELECT r.refresh_hash IS NOT NULL AND code.refresh_tokens_allowed AND 'offline_access' = ANY (string_to_array(code.scope, ' ')) AS offline) g
  ), refresh AS (
    INSERT INTO refresh_tokens (token_hash, family_id, client_id, account_id, connector, scope, email, email_verified, auth_time, amr, session_id, issued_at, expires_at, family_expires_at, dpop_jkt, resource)
    SELECT refresh_hash, family_id, client_id, account_id, connector, granted_scope, email, email_verified,
           coalesce(auth_time, expires_at - make_interval(secs => code_ttl)), coalesce(amr, ''), session_id, at, refresh_expires_at, family_expires_at, refresh_jkt, resource
    FROM granted WHERE offline
  ), ${issuedWithEventCtes(
    `INSERT INTO issued_tokens (jti, client_id, user_id, connector, scope, code_hash, refresh_family, issued_at, expires_at, session_id)
     SELECT jti, client_id, account_id, connector, granted_scope, hash, CASE WHEN offline THEN family_id END, at, token_expires_at, session_id FROM granted`,
    { at: "r.at", endpoint: "r.endpoint", ip: "r.ip", from: "issued JOIN req r USING (jti)" },
  )}
  SELECT i::int AS i, account_id AS "accountId", connector, scope, granted_scope AS "grantedScope", offline AS "offlineAccess", nonce, email,
         email_verified AS "emailVerified", auth_time AS "authTime", amr, session_id AS "sessionId", resource
  FROM granted`;

/**
 * Each grant's client as one that got tokens in the grant's login session (CTE `code`'s session_id),
 * for back-channel logout; a session that ended meanwhile queues the client's logout token at once.
 */
const SESSION_CLIENT_RECORDED = `session AS (
    -- FOR SHARE waits for a revocation under way and reads its outcome; one that comes later waits
    -- for this, then finds the client below: either way the client hears of the session's end.
    SELECT code.i, s.id_hash, s.account_id, s.connector, s.revoked_at IS NOT NULL AS ended
    FROM login_sessions s JOIN code ON s.id_hash = code.session_id FOR SHARE OF s
  ), session_client AS (
    INSERT INTO login_session_clients (session_id, client_id, created_at)
    SELECT session.id_hash, code.client_id, r.at FROM code JOIN session USING (i) JOIN req r USING (i) WHERE NOT session.ended
    ORDER BY session.id_hash, code.client_id -- concurrent batches wait on each other's links in one order, never in a cycle
    ON CONFLICT DO NOTHING
  ), ended_session_logout AS (
    INSERT INTO backchannel_logouts (client_id, session_id, account_id, connector, created_at, next_attempt_at)
    SELECT c.id, session.id_hash, session.account_id, session.connector, r.at, r.at
    FROM code JOIN session USING (i) JOIN req r USING (i) JOIN clients c ON c.id = code.client_id
    WHERE session.ended AND c.backchannel_logout_uri IS NOT NULL
  )`;

/**
 * The grant's account (CTE alias `grant_account`, of `account_id`) exists and is not blocked: a
 * grant issued before an account was blocked or deleted gives nothing afterwards, as Flow A's
 * consumption already checks. Blocking and deletion also withdraw unredeemed grants in their
 * transaction; this closes the race with a redemption running meanwhile.
 */
export const ACCOUNT_ACTIVE = (accountId: string) =>
  `EXISTS (SELECT 1 FROM accounts grant_account WHERE grant_account.id = ${accountId} AND grant_account.blocked_at IS NULL)`;
