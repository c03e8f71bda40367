import type pg from "pg";
import { callerValues, issuedWithEvent, type Caller } from "../audit";
import type { TokenRecord } from "../tokens/record";
import { utc, utcTypes } from "./client";

/**
 * Flow A's statements in plain SQL on the pool under Prisma, as named (prepared) statements: each
 * step is one round trip with no ORM query compilation, which measured at a third of Flow A's
 * server time (bench/README.md). Everything else goes through Prisma.
 */

export type NewChallenge = {
  stateHash: string;
  clientId: string;
  domain: string;
  address: string;
  scope: string;
  nonce?: string;
  message: string;
  expiresAt: Date;
  /** The caller's address bucket (addressBucket), when known. */
  ip?: string;
};

/** What storing a challenge found: whether the client exists and is enabled, has the domain, and whether the caller was under its cap (stored). */
export type ChallengeInsert = { enabled: boolean; domainRegistered: boolean; stored: boolean };

/**
 * Stores a challenge if its client exists, is enabled and has `domain` as a redirect URI, and the
 * caller (`ip`) has fewer than `caps.perIp` unused, unexpired ones, in one statement: the client
 * check and the insert were two round trips (bench/README.md). The client and the address keep
 * their newest `caps.perClient` and `caps.perAddress` unused ones: older ones are deleted rather
 * than the new one refused, so a stranger's flood cannot lock anyone else out, only make its own
 * caller refused. Each cap walks a partial index of unused challenges no further than the cap,
 * reading only what the index holds: the client's and the address's find the expiry of their
 * cap-th newest, and only rows at or before it (ties too) are read and deleted. Those are listed
 * once (ARRAY) and deleted by primary key: as `IN (...)` the generic plan listed them again for
 * every unused challenge. Says which condition failed, if one did.
 */
export async function insertChallenge(
  pool: pg.Pool,
  c: NewChallenge,
  caps: { perClient: number; perAddress: number; perIp: number },
  now = new Date(),
): Promise<ChallengeInsert> {
  const { rows } = await pool.query<ChallengeInsert>({
    name: "keyfob_insert_challenge",
    text: `WITH client AS (
             SELECT c.enabled, EXISTS (SELECT 1 FROM redirect_uris r WHERE r.client_id = c.id AND r.uri = $3) AS domain_registered
             FROM clients c WHERE c.id = $2
           ), accepted AS (
             SELECT 1 FROM client WHERE client.enabled AND client.domain_registered
               AND (SELECT count(*) FROM (SELECT 1 FROM challenges WHERE ip = $12 AND used_at IS NULL AND expires_at > $9 LIMIT $13) AS p) < $13
           ), evicted AS (
             DELETE FROM challenges WHERE EXISTS (SELECT 1 FROM accepted) AND state_hash = ANY (ARRAY(
               SELECT state_hash FROM challenges WHERE client_id = $2 AND used_at IS NULL AND expires_at > $9 AND expires_at <= (
                 SELECT expires_at FROM challenges WHERE client_id = $2 AND used_at IS NULL AND expires_at > $9 ORDER BY expires_at DESC OFFSET $10 - 1 LIMIT 1)
               UNION ALL
               SELECT state_hash FROM challenges WHERE address = $4 AND used_at IS NULL AND expires_at > $9 AND expires_at <= (
                 SELECT expires_at FROM challenges WHERE address = $4 AND used_at IS NULL AND expires_at > $9 ORDER BY expires_at DESC OFFSET $11 - 1 LIMIT 1)))
           ), stored AS (
             INSERT INTO challenges (state_hash, client_id, domain, address, scope, nonce, message, expires_at, ip)
             SELECT $1, $2, $3, $4, $5, $6, $7, $8, $12 FROM accepted
             RETURNING 1
           )
           SELECT COALESCE((SELECT enabled FROM client), false) AS enabled,
                  COALESCE((SELECT domain_registered FROM client), false) AS "domainRegistered", EXISTS (SELECT 1 FROM stored) AS stored`,
    values: [
      c.stateHash, c.clientId, c.domain, c.address, c.scope, c.nonce ?? null, c.message, utc(c.expiresAt), utc(now),
      caps.perClient, caps.perAddress, c.ip ?? null, caps.perIp,
    ],
  });
  return rows[0];
}

export type StoredChallenge = {
  client_id: string;
  domain: string;
  address: string;
  scope: string;
  nonce: string | null;
  message: string;
  expires_at: Date;
  used_at: Date | null;
  client_enabled: boolean;
  /** The address is a blocked account's, or a wallet linked to one. */
  account_blocked: boolean;
  /** The client's signers that are enabled, unexpired and unrevoked at `now`. */
  signers: string[];
};

export async function findChallenge(pool: pg.Pool, stateHash: string, now: Date): Promise<StoredChallenge | undefined> {
  const { rows } = await pool.query<StoredChallenge>({
    name: "keyfob_find_challenge",
    text: `SELECT ch.client_id, ch.domain, ch.address, ch.scope, ch.nonce, ch.message, ch.expires_at, ch.used_at,
                  c.enabled AS client_enabled,
                  EXISTS (SELECT 1 FROM accounts a WHERE a.blocked_at IS NOT NULL AND (a.id = ch.address
                          OR a.id = (SELECT i.account_id FROM identities i WHERE i.provider = 'web3' AND i.subject = ch.address))) AS account_blocked,
                  ARRAY(SELECT s.address FROM signers s
                        WHERE s.client_id = ch.client_id AND s.revoked_at IS NULL AND (s.expires_at IS NULL OR s.expires_at > $2)) AS signers
           FROM challenges ch JOIN clients c ON c.id = ch.client_id
           WHERE ch.state_hash = $1`,
    values: [stateHash, utc(now)],
    types: utcTypes,
  });
  return rows[0];
}

/**
 * Consumes a state and records the token issued for it with its audit event, in one statement
 * (issuedWithEvent): of concurrent submissions exactly one sees a row, and a token is never
 * recorded without its state consumed, nor without its token.issued event.
 */
export async function consumeChallenge(pool: pg.Pool, stateHash: string, token: TokenRecord, caller: Caller, now = new Date()): Promise<boolean> {
  const { rowCount } = await pool.query({
    name: "keyfob_consume_challenge",
    text: CONSUME_CHALLENGE,
    values: [stateHash, utc(now), token.jti, token.userId, token.connector, token.scope, utc(token.expiresAt), ...callerValues(caller)],
  });
  return rowCount === 1;
}

const CONSUME_CHALLENGE = `WITH consumed AS (
    UPDATE challenges SET used_at = $2 WHERE state_hash = $1 AND used_at IS NULL AND expires_at > $2 RETURNING client_id
  ), ${issuedWithEvent(
    `INSERT INTO issued_tokens (jti, client_id, user_id, connector, scope, issued_at, expires_at)
     SELECT $3, client_id, $4, $5, $6, $2, $7 FROM consumed`,
    { at: 2, endpoint: 8, ip: 9 },
  )}`;
