import type { Prisma } from "../db/generated/client";
import { callerValues, issuedWithEventCtes, type Caller } from "./audit";
import { batched, byRequest, requestRows, type Batched, type RequestColumn } from "./batch";
import { refusingDuplicates, utc, utcTypes, type Connection } from "./connection";
import type { TokenRecord } from "./tokens";

/**
 * Single-use things a login goes through: Flow A's challenges, pushed authorization requests, the
 * hosted login's interactions, authorization codes, device authorizations (RFC 8628), and passkey
 * challenges. Flow A's statements and the code exchange's are
 * plain SQL on the pool, as named (prepared) statements: each step is one round trip with no ORM
 * query compilation (see docs/decisions/2026-11-21-hot-statements-in-plain-sql.md). Those that
 * every request of Flow A and the code exchange runs are batched (lib/store/batch.ts): concurrent
 * requests share one execution.
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

/** What redeeming a login's grant (a code, an approved device code) checks of its client and records. */
export type GrantRedemption = {
  clientId: string;
  /** The secret the client authenticated with, checked again as the statement runs; undefined when not checked. */
  secretHash?: string | null;
  token: Pick<TokenRecord, "jti" | "expiresAt">;
  /**
   * The refresh family stored when offline_access is granted: its first token, its ends, and the
   * DPoP key a public client's family is bound to (RFC 9449 5); none, none granted.
   */
  refresh?: { tokenHash: string; familyId: string; expiresAt: Date; familyExpiresAt: Date; dpopJkt: string | null };
  /** A grant that recorded no login time was issued right after the login: its end less this lifetime (seconds). */
  codeTtl: number;
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

/** A redeemed grant: what its tokens say, the scope granted, and whether the refresh family was stored. */
export type RedeemedGrant = Pick<
  CodeRow,
  "accountId" | "connector" | "scope" | "nonce" | "email" | "emailVerified" | "authTime" | "amr" | "sessionId"
> & {
  grantedScope: string;
  offlineAccess: boolean;
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
  /** The login session that approved it (its id_hash): the device's tokens are issued in it. */
  sessionId: string;
};

export function codeStatements({ db, pool }: Connection) {
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
      return byRequest(requests.length, rows, { enabled: false, domainRegistered: false, stored: false });
    },
    SINGLE_USE_BATCHES,
  );
  const redeemCodes = grantRedeemer(pool, "redeem_codes", REDEEM_CODE);
  const redeemDeviceCodes = grantRedeemer(pool, "redeem_device_codes", REDEEM_DEVICE_CODE);
  return {
    /**
     * Stores a challenge if its client exists, is enabled and has `domain` as a redirect URI, and the
     * caller (`ip`) has fewer than `perIp` unused, unexpired ones, in one statement (batched with
     * concurrent ones), not two round trips (see docs/decisions/2026-11-21-hot-statements-in-plain-sql.md).
     * Nothing else's challenges are touched: a caller's are never pushed out by other callers'
     * requests, whatever client or address those name (the sweep bounds the total, trimming the
     * callers that hold the most first). Says which condition failed, if one did.
     */
    insertChallenge(challenge: NewChallenge, perIp: number, now = new Date()): Promise<ChallengeInsertRow> {
      return insertChallenges({ challenge, perIp, now });
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
     * (issuedWithEvent; batched with concurrent ones): of concurrent submissions exactly one sees a
     * row, and a token is never recorded without its state consumed, nor without its token.issued
     * event. The state is
     * consumed only while findChallenge's checks hold: its client enabled (and, if the client
     * requires DPoP, `proven`), its address not blocked, and the key that signed one of the
     * client's active signers when `signer` names it. False when any does not.
     */
    consumeChallenge(
      stateHash: string,
      token: TokenRecord,
      caller: Caller,
      holds: { signer?: string; proven: boolean },
      now = new Date(),
    ): Promise<boolean> {
      return consumeChallenges({ stateHash, token, caller, holds, now });
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
    redeemCode(redemption: CodeRedemption, caller: Caller, now = new Date()): Promise<RedeemedGrant | undefined> {
      return redeemCodes({ hash: redemption.codeHash, redemption, caller, now });
    },

    async createDeviceAuthorization(data: Prisma.DeviceAuthorizationUncheckedCreateInput): Promise<void> {
      await refusingDuplicates(db.deviceAuthorization.create({ data }));
    },

    /** The pending, unexpired device authorization of a user code, with what /device shows of it and its client. */
    async findDeviceByUserCode(userCodeHash: string, now: Date) {
      return (
        (await db.deviceAuthorization.findFirst({
          where: { userCodeHash, status: "pending", expiresAt: { gt: now }, client: { enabled: true, deviceFlow: true } },
          select: {
            scope: true,
            createdAt: true,
            requestIp: true,
            requestUserAgent: true,
            expiresAt: true,
            client: { select: { name: true, logoUrl: true } },
          },
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
        types: utcTypes,
      });
      return rows[0];
    },

    async createPushedRequest(data: Prisma.PushedAuthorizationRequestUncheckedCreateInput): Promise<void> {
      await db.pushedAuthorizationRequest.create({ data });
    },

    /** Uses up a client's unused, unexpired pushed request: its parameters, or undefined when there was none. */
    async consumePushedRequest(requestHash: string, clientId: string, now: Date): Promise<string | undefined> {
      const [row] = await db.pushedAuthorizationRequest.updateManyAndReturn({
        where: { requestHash, clientId, usedAt: null, expiresAt: { gt: now } },
        data: { usedAt: now },
        select: { parameters: true },
      });
      return row?.parameters;
    },

    /** Denies the pending, unexpired device authorization of a user code, using the code up: its client, or undefined when there was none. */
    async declineUserCode(userCodeHash: string, now: Date): Promise<string | undefined> {
      const [row] = await db.deviceAuthorization.updateManyAndReturn({
        where: { userCodeHash, status: "pending", expiresAt: { gt: now } },
        data: { userCodeHash: null, status: "denied" },
        select: { clientId: true },
      });
      return row?.clientId;
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
     * Redeems an approved device authorization as redeemCode redeems a code, in one statement before
     * the tokens are signed: of concurrent polls exactly one gets the grant. Its token is recorded
     * under the device code's hash, and its client in the login session that approved it.
     */
    redeemDeviceCode(deviceCodeHash: string, redemption: GrantRedemption, caller: Caller, now: Date): Promise<RedeemedGrant | undefined> {
      return redeemDeviceCodes({ hash: deviceCodeHash, redemption, caller, now });
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
 * insertChallenge over many requests. The caller's cap walks a partial index of unused challenges
 * no further than the cap. Requests of one batch do not see each other's challenges, as
 * concurrent statements never did.
 */
const INSERT_CHALLENGES = `WITH ${INSERT_REQUESTS.cte}, checked AS (
    SELECT r.*, coalesce(c.enabled, false) AS enabled,
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
  SELECT i, enabled, domain_registered AS "domainRegistered", stored.state_hash IS NOT NULL AS stored
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
    RETURNING r.i, r.jti, r.user_id, r.connector, r.scope, r.at, r.token_expires_at, ch.client_id
  ), ${issuedWithEventCtes(
    `INSERT INTO issued_tokens (jti, client_id, user_id, connector, scope, issued_at, expires_at)
     SELECT jti, client_id, user_id, connector, scope, at, token_expires_at FROM consumed`,
    { at: "r.at", endpoint: "r.endpoint", ip: "r.ip", from: "issued JOIN req r USING (jti)" },
  )}
  SELECT i FROM consumed`;

/** One redemption of a login's grant, as the statement over many takes it. */
type GrantRequest<G extends GrantRedemption = GrantRedemption> = { hash: string; redemption: G; caller: Caller; now: Date };

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
function grantRedeemer<G extends GrantRedemption>(
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
 * Batches of a single-use statement: one at a time per statement and instance, so that the calls
 * arriving meanwhile make the next one larger; at most 64 requests in one. One at a time, not two:
 * see docs/decisions/2026-11-27-group-commit.md. A batch waits only on the rows of its own
 * requests (a code's login session under revocation, a state consumed elsewhere), as they did; one
 * that takes over 100 ms (ten times a batch's time under that load) lets the next go beside it.
 */
const SINGLE_USE_BATCHES = { inFlight: 1, maxSize: 64, stalledMs: 100 };

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
    INSERT INTO refresh_tokens (token_hash, family_id, client_id, account_id, connector, scope, email, email_verified, auth_time, amr, session_id, issued_at, expires_at, family_expires_at, dpop_jkt)
    SELECT refresh_hash, family_id, client_id, account_id, connector, granted_scope, email, email_verified,
           coalesce(auth_time, expires_at - make_interval(secs => code_ttl)), coalesce(amr, ''), session_id, at, refresh_expires_at, family_expires_at, refresh_jkt
    FROM granted WHERE offline
  ), ${issuedWithEventCtes(
    `INSERT INTO issued_tokens (jti, client_id, user_id, connector, scope, code_hash, refresh_family, issued_at, expires_at, session_id)
     SELECT jti, client_id, account_id, connector, granted_scope, hash, CASE WHEN offline THEN family_id END, at, token_expires_at, session_id FROM granted`,
    { at: "r.at", endpoint: "r.endpoint", ip: "r.ip", from: "issued JOIN req r USING (jti)" },
  )}
  SELECT i::int AS i, account_id AS "accountId", connector, scope, granted_scope AS "grantedScope", offline AS "offlineAccess", nonce, email,
         email_verified AS "emailVerified", auth_time AS "authTime", amr, session_id AS "sessionId"
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
const ACCOUNT_ACTIVE = (accountId: string) =>
  `EXISTS (SELECT 1 FROM accounts grant_account WHERE grant_account.id = ${accountId} AND grant_account.blocked_at IS NULL)`;

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

/**
 * An approved device code, used once (RFC 8628 3.5); its tokens are issued in the login session
 * that approved it, which must not have ended (logout, revocation, an unlinked way in).
 * offline_access needs the client's device_flow_offline_access besides refresh tokens: a device a
 * person was tricked into approving does not keep access for good unless an admin chose so.
 */
const REDEEM_DEVICE_CODE = {
  columns: [] as RequestColumn<GrantRequest>[],
  sql: `UPDATE device_authorizations d SET used_at = r.at
    FROM req r, clients c
    WHERE d.device_code_hash = r.hash AND d.client_id = r.request_client AND d.status = 'approved' AND d.used_at IS NULL AND d.expires_at > r.at
      AND c.id = d.client_id AND c.enabled AND c.device_flow AND (NOT r.secret_checked OR c.secret_hash IS NOT DISTINCT FROM r.secret_hash)
      AND ${ACCOUNT_ACTIVE("d.account_id")}
      AND EXISTS (SELECT 1 FROM login_sessions approving WHERE approving.id_hash = d.session_id AND approving.revoked_at IS NULL)
    RETURNING r.i, d.client_id, d.session_id, d.account_id, d.connector, d.scope, NULL::text AS nonce, d.email, d.email_verified,
      d.auth_time, d.amr, d.expires_at, c.refresh_tokens_allowed AND c.device_flow_offline_access AS refresh_tokens_allowed`,
};
