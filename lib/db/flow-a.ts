import pg from "pg";
import type { TokenRecord } from "../tokens/record";

/**
 * Flow A's statements in plain SQL on the pool under Prisma, as named (prepared) statements: each
 * step is one round trip with no ORM query compilation, which measured at a third of Flow A's
 * server time (bench/README.md). Everything else goes through Prisma.
 */

/** Prisma keeps timestamps as UTC in `timestamp(3)` columns; read them as UTC whatever the process's time zone. */
const utcTypes = {
  getTypeParser: ((oid: number, format?: string) =>
    oid === 1114 ? (value: string) => new Date(`${value.replace(" ", "T")}Z`) : (pg.types.getTypeParser as (o: number, f?: string) => unknown)(oid, format)) as pg.CustomTypesConfig["getTypeParser"],
};

/** Written as UTC: `timestamp without time zone` keeps the digits and drops the zone. */
const utc = (date: Date) => date.toISOString();

export async function clientForChallenge(pool: pg.Pool, clientId: string, domain: string) {
  const { rows } = await pool.query<{ enabled: boolean; domain_registered: boolean }>({
    name: "keyfob_client_for_challenge",
    text: `SELECT c.enabled, EXISTS (SELECT 1 FROM redirect_uris r WHERE r.client_id = c.id AND r.uri = $2) AS domain_registered
           FROM clients c WHERE c.id = $1`,
    values: [clientId, domain],
  });
  return rows[0];
}

export type NewChallenge = {
  stateHash: string;
  clientId: string;
  domain: string;
  address: string;
  scope: string;
  nonce?: string;
  message: string;
  expiresAt: Date;
};

/**
 * Stores a challenge unless its client or its address already has `caps` unused, unexpired ones
 * (counted up to the cap only, on partial indexes). Returns false when a cap is reached.
 */
export async function insertChallenge(pool: pg.Pool, c: NewChallenge, caps: { perClient: number; perAddress: number }, now = new Date()): Promise<boolean> {
  const { rowCount } = await pool.query({
    name: "keyfob_insert_challenge",
    text: `INSERT INTO challenges (state_hash, client_id, domain, address, scope, nonce, message, expires_at)
           SELECT $1, $2, $3, $4, $5, $6, $7, $8
           WHERE (SELECT count(*) FROM (SELECT 1 FROM challenges WHERE client_id = $2 AND used_at IS NULL AND expires_at > $9 LIMIT $10) AS p) < $10
             AND (SELECT count(*) FROM (SELECT 1 FROM challenges WHERE address = $4 AND used_at IS NULL AND expires_at > $9 LIMIT $11) AS p) < $11`,
    values: [c.stateHash, c.clientId, c.domain, c.address, c.scope, c.nonce ?? null, c.message, utc(c.expiresAt), utc(now), caps.perClient, caps.perAddress],
  });
  return rowCount === 1;
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
 * Consumes a state and records the token issued for it, in one statement: of concurrent
 * submissions exactly one sees a row, and a token is never recorded without its state consumed.
 */
export async function consumeChallenge(pool: pg.Pool, stateHash: string, token: TokenRecord, now = new Date()): Promise<boolean> {
  const { rowCount } = await pool.query({
    name: "keyfob_consume_challenge",
    text: `WITH consumed AS (
             UPDATE challenges SET used_at = $2 WHERE state_hash = $1 AND used_at IS NULL AND expires_at > $2 RETURNING client_id
           )
           INSERT INTO issued_tokens (jti, client_id, user_id, connector, scope, issued_at, expires_at)
           SELECT $3, client_id, $4, $5, $6, $2, $7 FROM consumed`,
    values: [stateHash, utc(now), token.jti, token.userId, token.connector, token.scope, utc(token.expiresAt)],
  });
  return rowCount === 1;
}
