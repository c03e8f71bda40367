import type { Prisma } from "../db/generated/client";
import { callerValues, issuedWithEvent, type Caller } from "./audit";
import { utc, utcTypes, type Connection } from "./connection";
import type { RefreshGrant, TokenRecord } from "./tokens";

/**
 * Single-use things a login goes through: Flow A's challenges, the hosted login's interactions,
 * authorization codes, and passkey challenges. Flow A's statements and the code exchange's are
 * plain SQL on the pool, as named (prepared) statements: each step is one round trip with no ORM
 * query compilation, which measured at a third of Flow A's server time, and cost more than the rest
 * of the exchange's database work (bench/README.md).
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
export type ChallengeInsertRow = { enabled: boolean; domainRegistered: boolean; stored: boolean };

export type ChallengeRow = {
  clientId: string;
  domain: string;
  address: string;
  scope: string;
  nonce: string | null;
  message: string;
  expiresAt: Date;
  usedAt: Date | null;
  clientEnabled: boolean;
  /** The client's token requests must carry a DPoP proof (RFC 9449 5.2). */
  dpopBoundAccessTokens: boolean;
  /** The address is a blocked account's, or a wallet linked to one. */
  accountBlocked: boolean;
  /** The client's signers that are enabled, unexpired and unrevoked at `now`. */
  signers: string[];
};

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

/** The first refresh token of a family, stored with the code's access token (offline_access). */
export type NewRefreshFamily = { tokenHash: string; grant: RefreshGrant };

export function codeStatements({ db, pool }: Connection) {
  return {
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
    async insertChallenge(
      c: NewChallenge,
      caps: { perClient: number; perAddress: number; perIp: number },
      now = new Date(),
    ): Promise<ChallengeInsertRow> {
      const { rows } = await pool.query<ChallengeInsertRow>({
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
          c.stateHash,
          c.clientId,
          c.domain,
          c.address,
          c.scope,
          c.nonce ?? null,
          c.message,
          utc(c.expiresAt),
          utc(now),
          caps.perClient,
          caps.perAddress,
          c.ip ?? null,
          caps.perIp,
        ],
      });
      return rows[0];
    },

    async findChallenge(stateHash: string, now: Date): Promise<ChallengeRow | undefined> {
      const { rows } = await pool.query<ChallengeRow>({
        name: "keyfob_find_challenge",
        text: `SELECT ch.client_id AS "clientId", ch.domain, ch.address, ch.scope, ch.nonce, ch.message, ch.expires_at AS "expiresAt", ch.used_at AS "usedAt",
                      c.enabled AS "clientEnabled", c.dpop_bound_access_tokens AS "dpopBoundAccessTokens",
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

    /**
     * Consumes a state and records the token issued for it with its audit event, in one statement
     * (issuedWithEvent): of concurrent submissions exactly one sees a row, and a token is never
     * recorded without its state consumed, nor without its token.issued event.
     */
    async consumeChallenge(stateHash: string, token: TokenRecord, caller: Caller, now = new Date()): Promise<boolean> {
      const { rowCount } = await pool.query({
        name: "keyfob_consume_challenge",
        text: CONSUME_CHALLENGE,
        values: [stateHash, utc(now), token.jti, token.userId, token.connector, token.scope, utc(token.expiresAt), ...callerValues(caller)],
      });
      return rowCount === 1;
    },

    /** Unfinished logins of a caller, counted up to `cap`. */
    pendingInteractions(ip: string, cap: number, now: Date) {
      return db.interaction.count({ where: { ip, completedAt: null, expiresAt: { gt: now } }, take: cap });
    },

    createInteraction(data: Prisma.InteractionUncheckedCreateInput) {
      return db.interaction.create({ data });
    },

    async findInteraction(id: string) {
      return (await db.interaction.findUnique({ where: { id } })) ?? undefined;
    },

    /** An interaction with what the login page and its completion need of its client. */
    async findInteractionWithClient(id: string) {
      return (
        (await db.interaction.findUnique({
          where: { id },
          include: { client: { select: { name: true, logoUrl: true, enabled: true } } },
        })) ?? undefined
      );
    },

    /** Completes an unfinished, unexpired interaction (a login or a cancel), once: the row, or undefined when it was not. */
    async completeInteraction(id: string, now: Date, outcome: "login" | "cancelled") {
      const [interaction] = await db.interaction.updateManyAndReturn({
        where: { id, completedAt: null, expiresAt: { gt: now } },
        data: { completedAt: now, outcome },
      });
      return interaction;
    },

    async createCode(data: Prisma.AuthorizationCodeUncheckedCreateInput): Promise<void> {
      await db.authorizationCode.create({ data });
    },

    async findCode(codeHash: string): Promise<CodeRow | undefined> {
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
    async useCode(codeHash: string, now: Date): Promise<boolean> {
      const { count } = await db.authorizationCode.updateMany({
        where: { codeHash, usedAt: null, expiresAt: { gt: now } },
        data: { usedAt: now },
      });
      return count === 1;
    },

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
    async consumeCode(
      codeHash: string,
      token: TokenRecord,
      caller: Caller,
      now = new Date(),
      refresh?: NewRefreshFamily,
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
        values: [
          ...values,
          refresh.tokenHash,
          grant.scope,
          grant.email,
          grant.emailVerified,
          utc(grant.authTime),
          grant.amr,
          utc(grant.expiresAt),
          utc(grant.familyExpiresAt),
          grant.dpopJkt,
        ],
      });
      return rowCount === 1;
    },

    /** Stores a passkey challenge, sweeping those that expired before `sweepBefore` on the way. */
    async createPasskeyChallenge(data: Prisma.PasskeyChallengeUncheckedCreateInput, sweepBefore: Date): Promise<void> {
      await db.passkeyChallenge.deleteMany({ where: { expiresAt: { lt: sweepBefore } } });
      await db.passkeyChallenge.create({ data });
    },

    /**
     * Uses up a passkey challenge issued for `purpose` and, when given, this login or account, unused
     * and unexpired: one conditional update, so of two answers to one challenge only the first gets the row.
     */
    async consumePasskeyChallenge(
      challengeHash: string,
      purpose: string,
      binding: { interactionId?: string; accountId?: string },
      now: Date,
    ) {
      const [row] = await db.passkeyChallenge.updateManyAndReturn({
        where: {
          challengeHash,
          purpose,
          ...(binding.interactionId !== undefined && { interactionId: binding.interactionId }),
          ...(binding.accountId !== undefined && { accountId: binding.accountId }),
          usedAt: null,
          expiresAt: { gt: now },
        },
        data: { usedAt: now },
      });
      return row;
    },
  };
}

const CONSUME_CHALLENGE = `WITH consumed AS (
    UPDATE challenges SET used_at = $2 WHERE state_hash = $1 AND used_at IS NULL AND expires_at > $2 RETURNING client_id
  ), ${issuedWithEvent(
    `INSERT INTO issued_tokens (jti, client_id, user_id, connector, scope, issued_at, expires_at)
     SELECT $3, client_id, $4, $5, $6, $2, $7 FROM consumed`,
    { at: 2, endpoint: 8, ip: 9 },
  )}`;

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
    INSERT INTO refresh_tokens (token_hash, family_id, client_id, account_id, connector, scope, email, email_verified, auth_time, amr, issued_at, expires_at, family_expires_at, dpop_jkt)
    SELECT $13, $8, client_id, $4, $5, $14, $15, $16, $17, $18, $2, $19, $20, $21 FROM consumed
  ), ${CODE_TOKEN_ISSUED}`;
