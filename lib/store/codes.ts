import type { Prisma } from "../db/generated/client";
import { callerValues, issuedWithEvent, type Caller } from "./audit";
import { refusingDuplicates, utc, utcTypes, type Connection } from "./connection";
import type { RefreshGrant, TokenRecord } from "./tokens";

/**
 * Single-use things a login goes through: Flow A's challenges, the hosted login's interactions,
 * authorization codes, device authorizations (RFC 8628), and passkey challenges. Flow A's statements and the code exchange's are
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
  expiresAt: Date;
  usedAt: Date | null;
};

/** A device authorization as its device's poll finds it (RFC 8628 3.4), after the poll was recorded. */
export type DevicePollRow = {
  clientId: string;
  scope: string;
  status: "pending" | "approved" | "denied";
  accountId: string | null;
  connector: string | null;
  email: string | null;
  emailVerified: boolean;
  authTime: Date | null;
  amr: string | null;
  expiresAt: Date;
  usedAt: Date | null;
  /** The interval from now on (with slow_down's 5 seconds when this poll came too soon). */
  interval: number;
  /** The poll came sooner than the interval after the previous one (slow_down). */
  tooSoon: boolean;
};

/** What approves a device authorization: the login, as the tokens will tell it. */
export type DeviceApproval = {
  accountId: string;
  connector: string;
  email: string | null;
  emailVerified: boolean;
  authTime: Date;
  amr: string;
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
                      c.enabled AS "clientEnabled",
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
                      session_id AS "sessionId", expires_at AS "expiresAt", used_at AS "usedAt"
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
    consumeCode(
      codeHash: string,
      token: TokenRecord,
      caller: Caller,
      now = new Date(),
      refresh?: NewRefreshFamily,
      client: { secretHash?: string | null } = {},
    ): Promise<boolean> {
      return consume(pool, CODE_CONSUMED, "code", codeHash, token, caller, now, refresh, client);
    },

    async createDeviceAuthorization(data: Prisma.DeviceAuthorizationUncheckedCreateInput): Promise<void> {
      await refusingDuplicates(db.deviceAuthorization.create({ data }));
    },

    /** The pending, unexpired device authorization of a user code, with what /device shows of its client. */
    async findDeviceByUserCode(userCodeHash: string, now: Date) {
      return (
        (await db.deviceAuthorization.findFirst({
          where: { userCodeHash, status: "pending", expiresAt: { gt: now }, client: { enabled: true, deviceFlow: true } },
          select: { scope: true, expiresAt: true, client: { select: { name: true, logoUrl: true } } },
        })) ?? undefined
      );
    },

    /**
     * The user confirmed a user code: it is used up (a user code works once) and the hosted login's
     * interaction for its device authorization is created, in one statement, so of two confirmations
     * only one gets an interaction. Undefined when the code is unknown, used, expired, or its client
     * is disabled or no longer allowed the grant.
     */
    async enterUserCode(
      userCodeHash: string,
      interaction: { id: string; redirectUri: string; walletNonce: string; ip: string | null; expiresAt: Date; uiLocales: string | null },
      now: Date,
    ): Promise<{ id: string } | undefined> {
      const { rows } = await pool.query<{ id: string }>({
        text: `WITH entered AS (
                 UPDATE device_authorizations d SET user_code_hash = NULL
                 WHERE d.user_code_hash = $1 AND d.status = 'pending' AND d.expires_at > $2
                   AND EXISTS (SELECT 1 FROM clients c WHERE c.id = d.client_id AND c.enabled AND c.device_flow)
                 RETURNING d.device_code_hash, d.client_id, d.scope, d.expires_at
               )
               INSERT INTO interactions (id, client_id, redirect_uri, scope, wallet_nonce, ip, ui_locales, expires_at, device_code_hash)
               SELECT $3, client_id, $4, scope, $5, $6, $7, LEAST($8::timestamp, expires_at), device_code_hash FROM entered
               RETURNING id`,
        values: [
          userCodeHash,
          utc(now),
          interaction.id,
          interaction.redirectUri,
          interaction.walletNonce,
          interaction.ip,
          interaction.uiLocales,
          utc(interaction.expiresAt),
        ],
      });
      return rows[0];
    },

    /** Denies the pending, unexpired device authorization of a user code, using the code up; false when there was none. */
    async declineUserCode(userCodeHash: string, now: Date): Promise<boolean> {
      const { count } = await db.deviceAuthorization.updateMany({
        where: { userCodeHash, status: "pending", expiresAt: { gt: now } },
        data: { userCodeHash: null, status: "denied" },
      });
      return count === 1;
    },

    /** Ends a pending, unexpired device authorization: approved by a login, or denied; false when it was not pending. */
    async settleDeviceAuthorization(deviceCodeHash: string, now: Date, outcome: { approved: DeviceApproval } | { denied: true }) {
      const { count } = await db.deviceAuthorization.updateMany({
        where: { deviceCodeHash, status: "pending", expiresAt: { gt: now } },
        data: "approved" in outcome ? { status: "approved", ...outcome.approved } : { status: "denied" },
      });
      return count === 1;
    },

    /**
     * Records a device's poll and reads its device authorization, in one statement: the row is
     * locked, so concurrent polls (on any instance) each see the one before. A poll sooner than the
     * interval after the previous one adds 5 seconds to it (RFC 8628 3.5, slow_down).
     */
    async pollDeviceAuthorization(deviceCodeHash: string, now: Date): Promise<DevicePollRow | undefined> {
      const { rows } = await pool.query<DevicePollRow>({
        name: "keyfob_poll_device",
        text: `WITH previous AS (
                 SELECT device_code_hash, poll_interval,
                        last_polled_at IS NOT NULL AND last_polled_at > $2::timestamp - make_interval(secs => poll_interval) AS too_soon
                 FROM device_authorizations WHERE device_code_hash = $1 FOR UPDATE
               )
               UPDATE device_authorizations d
               SET last_polled_at = $2, poll_interval = CASE WHEN p.too_soon THEN p.poll_interval + 5 ELSE p.poll_interval END
               FROM previous p WHERE d.device_code_hash = p.device_code_hash
               RETURNING d.client_id AS "clientId", d.scope, d.status, d.account_id AS "accountId", d.connector, d.email,
                         d.email_verified AS "emailVerified", d.auth_time AS "authTime", d.amr, d.expires_at AS "expiresAt",
                         d.used_at AS "usedAt", d.poll_interval AS "interval", p.too_soon AS "tooSoon"`,
        values: [deviceCodeHash, utc(now)],
        types: utcTypes,
      });
      return rows[0];
    },

    /**
     * Uses an approved device authorization and records the token issued for it with its audit
     * event (and, with offline_access, the first refresh token of a new family), in one statement,
     * checked as consumeCode checks a code: of concurrent polls exactly one gets the tokens.
     */
    consumeDeviceCode(
      deviceCodeHash: string,
      token: TokenRecord,
      caller: Caller,
      now: Date,
      refresh: NewRefreshFamily | undefined,
      client: { secretHash?: string | null },
    ): Promise<boolean> {
      return consume(pool, DEVICE_CODE_CONSUMED, "device", deviceCodeHash, token, caller, now, refresh, client);
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

/**
 * Uses a code (an authorization code, or an approved device code: `consumed`, $1 its hash) and records
 * its token with its audit event, and the first refresh token of a family when given.
 */
async function consume(
  pool: Connection["pool"],
  consumed: string,
  kind: "code" | "device",
  hash: string,
  token: TokenRecord,
  caller: Caller,
  now: Date,
  refresh: NewRefreshFamily | undefined,
  client: { secretHash?: string | null },
): Promise<boolean> {
  const values: unknown[] = [
    hash,
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
    const { rowCount } = await pool.query({ name: `keyfob_consume_${kind}`, text: `${consumed}, ${CODE_TOKEN_ISSUED}`, values });
    return rowCount === 1;
  }
  const { grant } = refresh;
  const { rowCount } = await pool.query({
    name: `keyfob_consume_${kind}_with_refresh`,
    text: `${consumed}, ${REFRESH_STORED}, ${CODE_TOKEN_ISSUED}`,
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
    ],
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
const REFRESH_STORED = `refresh AS (
    INSERT INTO refresh_tokens (token_hash, family_id, client_id, account_id, connector, scope, email, email_verified, auth_time, amr, issued_at, expires_at, family_expires_at)
    SELECT $13, $8, client_id, $4, $5, $14, $15, $16, $17, $18, $2, $19, $20 FROM consumed
  )`;
/** An approved device code, used once; its tokens are recorded with its hash as an authorization code's are. */
const DEVICE_CODE_CONSUMED = `WITH consumed AS (
    UPDATE device_authorizations d SET used_at = $2
    WHERE d.device_code_hash = $1 AND d.status = 'approved' AND d.used_at IS NULL AND d.expires_at > $2
      AND EXISTS (SELECT 1 FROM clients c WHERE c.id = d.client_id AND c.enabled AND c.device_flow
                  AND (NOT $9::boolean OR c.secret_hash IS NOT DISTINCT FROM $10::text))
    RETURNING d.client_id
  )`;
