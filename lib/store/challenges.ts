import { callerValues, issuedWithEventCtes } from "./audit";
import { batched, byRequest, requestRows, SINGLE_USE_BATCHES } from "./batch";
import { utc, utcTypes, type Connection } from "./connection";
import type { Caller, ChallengeInsertRow, ChallengeRow, ChallengeStore, NewChallenge, TokenRecord } from "./contract";

/**
 * Flow A's challenges: the SIWE message issued for a state (/generate_challenge), consumed once by
 * its signed submission (/submit_challenge). Each step is one statement, plain SQL on the pool as
 * a named (prepared) statement, with no ORM query compilation (see
 * docs/decisions/2026-11-21-hot-statements-in-plain-sql.md); storing and consuming are batched
 * (lib/store/batch.ts): concurrent requests share one execution.
 */

export function challengeStatements({ pool }: Connection): ChallengeStore {
  const consumeChallenges = batched<ConsumeRequest, boolean>(
    "consume_challenges",
    async (requests) => {
      const { rows } = await pool.query<{ i: string }>({
        name: "keyfob_consume_challenges",
        text: CONSUME_CHALLENGES,
        values: CONSUME_REQUESTS.values(requests),
      });
      return byRequest(requests.length, rows, false).map((row) => row !== false);
    },
    SINGLE_USE_BATCHES,
  );
  const insertChallenges = batched<InsertRequest, ChallengeInsertRow>(
    "insert_challenges",
    async (requests) => {
      const { rows } = await pool.query<ChallengeInsertRow & { i: string }>({
        name: "keyfob_insert_challenges",
        text: INSERT_CHALLENGES,
        values: INSERT_REQUESTS.values(requests),
      });
      return byRequest(requests.length, rows, { enabled: false, domainRegistered: false, stored: false, signingAlg: "RS256" });
    },
    SINGLE_USE_BATCHES,
  );
  return {
    insert(challenge, perIp, now) {
      return insertChallenges({ challenge, perIp, now });
    },

    async find(stateHash, now) {
      const { rows } = await pool.query<ChallengeRow>({
        name: "keyfob_find_challenge",
        text: `SELECT ch.client_id AS "clientId", ch.domain, ch.address, ch.scope, ch.nonce, ch.message, ch.expires_at AS "expiresAt", ch.used_at AS "usedAt",
                      c.enabled AS "clientEnabled", c.dpop_bound_access_tokens AS "dpopBoundAccessTokens",
                      c.id_token_signed_response_alg AS "idTokenSignedResponseAlg",
                      EXISTS (SELECT 1 FROM accounts a WHERE a.blocked_at IS NOT NULL AND (a.id = ch.address
                              OR a.id = (SELECT i.account_id FROM identities i WHERE i.provider = 'web3' AND i.subject = ch.address))) AS "accountBlocked",
                      ARRAY(SELECT s.address FROM signers s
                            WHERE s.client_id = ch.client_id AND s.revoked_at IS NULL AND (s.expires_at IS NULL OR s.expires_at > $2)) AS signers
               FROM challenges ch JOIN clients c ON c.id = ch.client_id
               WHERE ch.state_hash = $1`,
        values: [stateHash, utc(now)],
        types: utcTypes,
      });
      return rows[0];
    },

    /** The token and its token.issued event go in as issuedWithEvent (./audit.ts) puts them. */
    consume(stateHash, token, caller, holds, now) {
      return consumeChallenges({ stateHash, token, caller, holds, now });
    },
  };
}

/** One Flow A challenge to store, as the statement over many takes it. */
type InsertRequest = { challenge: NewChallenge; perIp: number; now: Date };

const INSERT_REQUESTS = requestRows<InsertRequest>([
  ["state_hash", "text", (r) => r.challenge.stateHash],
  ["client_id", "text", (r) => r.challenge.clientId],
  ["domain", "text", (r) => r.challenge.domain],
  ["address", "text", (r) => r.challenge.address],
  ["scope", "text", (r) => r.challenge.scope],
  ["nonce", "text", (r) => r.challenge.nonce ?? null],
  ["message", "text", (r) => r.challenge.message],
  ["expires_at", "timestamp", (r) => utc(r.challenge.expiresAt)],
  ["ip", "text", (r) => r.challenge.ip ?? null],
  ["at", "timestamp", (r) => utc(r.now)],
  ["per_ip", "integer", (r) => r.perIp],
]);

/**
 * insert over many requests. The caller's cap walks a partial index of unused challenges
 * no further than the cap. Requests of one batch do not see each other's challenges, as
 * concurrent statements never did.
 */
const INSERT_CHALLENGES = `WITH ${INSERT_REQUESTS.cte}, checked AS (
    SELECT r.*, coalesce(c.enabled, false) AS enabled, c.id_token_signed_response_alg AS signing_alg,
           EXISTS (SELECT 1 FROM redirect_uris u WHERE u.client_id = c.id AND u.uri = r.domain) AS domain_registered
    FROM req r LEFT JOIN clients c ON c.id = r.client_id
  ), accepted AS (
    SELECT * FROM checked WHERE enabled AND domain_registered
      AND (SELECT count(*) FROM (SELECT 1 FROM challenges p WHERE p.ip = checked.ip AND p.used_at IS NULL AND p.expires_at > checked.at
                                 LIMIT checked.per_ip) AS pending) < checked.per_ip
  ), stored AS (
    INSERT INTO challenges (state_hash, client_id, domain, address, scope, nonce, message, expires_at, ip)
    SELECT state_hash, client_id, domain, address, scope, nonce, message, expires_at, ip FROM accepted
    RETURNING state_hash
  )
  SELECT i, enabled, domain_registered AS "domainRegistered", stored.state_hash IS NOT NULL AS stored, signing_alg AS "signingAlg"
  FROM checked LEFT JOIN stored USING (state_hash)`;

/** One consumption of a Flow A state, as the statement over many takes it. */
type ConsumeRequest = { stateHash: string; token: TokenRecord; caller: Caller; holds: { signer?: string; proven: boolean }; now: Date };

const CONSUME_REQUESTS = requestRows<ConsumeRequest>([
  ["state_hash", "text", (r) => r.stateHash],
  ["at", "timestamp", (r) => utc(r.now)],
  ["jti", "text", (r) => r.token.jti],
  ["user_id", "text", (r) => r.token.userId],
  ["connector", "text", (r) => r.token.connector],
  ["scope", "text", (r) => r.token.scope],
  ["token_expires_at", "timestamp", (r) => utc(r.token.expiresAt)],
  ["endpoint", "text", (r) => callerValues(r.caller)[0]],
  ["ip", "text", (r) => callerValues(r.caller)[1]],
  ["signer", "text", (r) => r.holds.signer ?? null],
  ["proven", "boolean", (r) => r.holds.proven],
]);

const CONSUME_CHALLENGES = `WITH ${CONSUME_REQUESTS.cte}, consumed AS (
    UPDATE challenges ch SET used_at = r.at
    FROM req r, clients c
    WHERE ch.state_hash = r.state_hash AND ch.used_at IS NULL AND ch.expires_at > r.at
      AND c.id = ch.client_id AND c.enabled AND (NOT c.dpop_bound_access_tokens OR r.proven)
      AND NOT EXISTS (SELECT 1 FROM accounts a WHERE a.blocked_at IS NOT NULL AND (a.id = ch.address
                      OR a.id = (SELECT i.account_id FROM identities i WHERE i.provider = 'web3' AND i.subject = ch.address)))
      AND (r.signer IS NULL OR EXISTS (SELECT 1 FROM signers s WHERE s.client_id = ch.client_id AND s.address = r.signer
                                       AND s.revoked_at IS NULL AND (s.expires_at IS NULL OR s.expires_at > r.at)))
    RETURNING r.i, r.jti, r.user_id, r.connector, r.scope, r.at, r.token_expires_at, r.signer, ch.client_id
  ), ${issuedWithEventCtes(
    `INSERT INTO issued_tokens (jti, client_id, user_id, connector, scope, issued_at, expires_at, signer)
     SELECT jti, client_id, user_id, connector, scope, at, token_expires_at, signer FROM consumed`,
    { at: "r.at", endpoint: "r.endpoint", ip: "r.ip", from: "issued JOIN req r USING (jti)" },
  )}
  SELECT i FROM consumed`;
