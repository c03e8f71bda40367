import { ADMIN_SCOPE } from "../admin/scopes";
import { Prisma } from "../db/generated/client";
import { callerValues, issuedWithEvent, storableText } from "./audit";
import { utc, type Connection } from "./connection";
import type { AccessTokenCheckRow, Caller, FamilyRevocation, GrantSelector, TokenRecord, TokenSelector, TokenStore } from "./contract";

/**
 * Access tokens (issued_tokens) and refresh-token families. The statements that issue a token
 * (client_credentials, a refresh token's rotation; Flow A's and the code exchange's: ./challenges.ts, ./grants.ts)
 * and the check of a presented token are plain SQL on the pool, as named (prepared) statements:
 * see docs/decisions/2026-11-21-hot-statements-in-plain-sql.md
 */

export function tokenStatements({ db, pool }: Connection): TokenStore {
  /**
   * Each pass is one statement for both tables; passes repeat until one finds nothing left, because a
   * rotation that committed while a pass ran adds a successor (and an access token) that pass could
   * not see, and a later rotation needs a live row, which a pass that changed nothing proves there is
   * none of.
   */
  const revokeRefreshFamilies: TokenStore["revokeRefreshFamilies"] = async (selector, now) => {
    const { familyId, clientId, accountId } = selector;
    if (familyId === undefined && clientId === undefined && accountId === undefined)
      throw new Error("revokeRefreshFamilies needs a family, a client or an account");
    const refreshWhere = Prisma.join(
      [
        Prisma.sql`revoked_at IS NULL`,
        ...(familyId !== undefined ? [Prisma.sql`family_id = ${familyId}`] : []),
        ...(clientId !== undefined ? [Prisma.sql`client_id = ${clientId}`] : []),
        ...(accountId !== undefined ? [Prisma.sql`account_id = ${accountId}`] : []),
      ],
      " AND ",
    );
    const accessWhere = Prisma.join(
      [
        Prisma.sql`revoked_at IS NULL AND refresh_family IS NOT NULL`,
        ...(familyId !== undefined ? [Prisma.sql`refresh_family = ${familyId}`] : []),
        ...(clientId !== undefined ? [Prisma.sql`client_id = ${clientId}`] : []),
        ...(accountId !== undefined ? [Prisma.sql`user_id = ${accountId}`] : []),
      ],
      " AND ",
    );
    const total: FamilyRevocation = { families: 0, refreshTokens: 0, accessTokens: 0 };
    for (let pass = 0; pass < 10; pass++) {
      const [counts] = await db.$queryRaw<{ refresh: number; families: number; access: number }[]>`
        WITH r AS (
          UPDATE refresh_tokens SET revoked_at = ${now} WHERE ${refreshWhere}
          RETURNING family_id, (used_at IS NULL AND expires_at > ${now} AND family_expires_at > ${now}) AS live
        ), a AS (
          UPDATE issued_tokens SET revoked_at = ${now} WHERE ${accessWhere} RETURNING 1
        )
        SELECT (SELECT count(*) FROM r)::int AS refresh,
               (SELECT count(DISTINCT family_id) FROM r WHERE live)::int AS families,
               (SELECT count(*) FROM a)::int AS access`;
      total.families += counts.families;
      total.refreshTokens += counts.refresh;
      total.accessTokens += counts.access;
      if (counts.refresh === 0) break;
    }
    return total;
  };

  const activeWhere = (selector: TokenSelector, now: Date) => ({
    clientId: selector.clientId,
    userId: selector.userIds && { in: selector.userIds },
    ...(selector.vehicle && { vehicle: { not: null } }),
    revokedAt: null,
    expiresAt: { gt: now },
  });
  const liveGrantWhere = (selector: GrantSelector, now: Date) => ({
    clientId: selector.clientId,
    accountId: selector.accountId,
    usedAt: null,
    revokedAt: null,
    expiresAt: { gt: now },
    familyExpiresAt: { gt: now },
  });

  return {
    async recordClientToken(clientId, secretHash, scopes, token, caller, now) {
      const { rowCount } = await pool.query({
        name: "keyfob_record_client_token",
        text: `WITH ${issuedWithEvent(
          `INSERT INTO issued_tokens (jti, client_id, user_id, connector, scope, issued_at, expires_at)
           SELECT $3, c.id, $4, $5, $6, $7, $8 FROM clients c
           WHERE c.id = $1 AND c.enabled AND c.management_api AND c.secret_hash = $2
             AND (c.management_scopes @> $9::text[] OR $10 = ANY (c.management_scopes))`,
          { at: "$7", endpoint: "$11", ip: "$12" },
        )}`,
        values: [clientId, secretHash, ...recordValues(token, now), scopes, ADMIN_SCOPE, ...callerValues(caller)],
      });
      return rowCount === 1;
    },

    async recordLicenseToken(clientId, token, caller, holds, now) {
      const { rowCount } = await pool.query({
        name: "keyfob_record_license_token",
        text: RECORD_LICENSE_TOKEN,
        values: [clientId, ...recordValues(token, now), holds.signer ?? null, holds.proven, ...callerValues(caller)],
      });
      return rowCount === 1;
    },

    async recordVehicleToken(clientId, token, caller, now) {
      const [endpoint, ip] = callerValues(caller);
      const { rowCount } = await pool.query({
        name: "keyfob_record_vehicle_token",
        text: RECORD_VEHICLE_TOKEN,
        values: [
          token.subjectJti,
          clientId,
          utc(now),
          token.jti,
          token.scope,
          utc(token.expiresAt),
          token.vehicle,
          token.privileges,
          token.chainBlock?.toString() ?? null,
          ip,
          storableText(`${endpoint}: ${token.vehicle} ${token.scope}`),
        ],
      });
      return rowCount === 1;
    },

    async revokeVehicleTokens({ vehicle, block, clientId, privilege }, now) {
      return db.$executeRaw`
        UPDATE issued_tokens SET revoked_at = ${now}
        WHERE vehicle = ${vehicle} AND revoked_at IS NULL AND expires_at > ${now}
          AND (chain_block IS NULL OR chain_block < ${block})
          AND (${clientId ?? null}::text IS NULL OR client_id = ${clientId ?? null})
          AND (${privilege ?? null}::int IS NULL OR ${privilege ?? null}::int = ANY (vehicle_privileges))`;
    },

    async check(jti, kid, now) {
      const { rows } = await pool.query<AccessTokenCheckRow>({
        name: "keyfob_verify_access_token",
        text: `SELECT t.client_id AS "clientId",
                      t.revoked_at IS NULL AND t.expires_at > $3 AND EXISTS (SELECT 1 FROM clients c WHERE c.id = t.client_id) AS active,
                      EXISTS (SELECT 1 FROM signing_keys k WHERE k.kid = $2 AND k.revoked_at IS NULL AND k.unpublished_at IS NULL
                              UNION ALL
                              SELECT 1 FROM alg_signing_keys k WHERE k.kid = $2 AND k.revoked_at IS NULL AND k.unpublished_at IS NULL
                              UNION ALL
                              SELECT 1 FROM vehicle_signing_keys k WHERE k.kid = $2 AND k.revoked_at IS NULL AND k.unpublished_at IS NULL) AS "keyValid"
               FROM issued_tokens t WHERE t.jti = $1`,
        // Timestamps are kept as UTC in `timestamp(3)` columns: compared with the UTC digits of now.
        values: [jti, kid, utc(now)],
      });
      return rows[0];
    },

    async revokeTokensOfCode(codeHash, now) {
      const issued = await db.issuedToken.findMany({ where: { codeHash, refreshFamily: { not: null } }, select: { refreshFamily: true } });
      let count = 0;
      for (const familyId of new Set(issued.map((token) => token.refreshFamily!))) {
        count += (await revokeRefreshFamilies({ familyId }, now)).accessTokens;
      }
      count += (await db.issuedToken.updateMany({ where: { codeHash, revokedAt: null }, data: { revokedAt: now } })).count;
      return count;
    },

    async revoke(jti, now, clientId) {
      await db.issuedToken.updateMany({ where: { jti, clientId, revokedAt: null }, data: { revokedAt: now } });
    },

    async find(jti) {
      return (await db.issuedToken.findUnique({ where: { jti }, select: { clientId: true, userId: true } })) ?? undefined;
    },

    async revokeActive(target, now) {
      const where = { ...activeWhere(target, now), jti: target.jti, ...(target.userId !== undefined && { userId: target.userId }) };
      return (await db.issuedToken.updateMany({ where, data: { revokedAt: now } })).count;
    },

    activePage(selector, skip, take, now) {
      return db.issuedToken.findMany({
        where: activeWhere(selector, now),
        orderBy: { issuedAt: "desc" },
        skip,
        take,
        omit: { codeHash: true, chainBlock: true, signer: true },
      });
    },

    countActive(selector, now) {
      return db.issuedToken.count({ where: activeWhere(selector, now) });
    },

    async findRefreshToken(tokenHash) {
      return (
        (await db.refreshToken.findUnique({
          where: { tokenHash },
          include: { client: { select: { enabled: true, refreshTokensAllowed: true, resources: true } } },
        })) ?? undefined
      );
    },

    async rotateRefreshToken(presented, successor, token, caller, now) {
      const { rowCount } = await pool.query({
        name: "keyfob_rotate_refresh_token",
        text: ROTATE_REFRESH_TOKEN,
        values: [
          presented.tokenHash,
          presented.clientId,
          utc(now),
          successor.tokenHash,
          utc(successor.expiresAt),
          ...issuedWithRefreshValues(presented, token, caller),
        ],
      });
      return rowCount === 1;
    },

    async recordReuseWithinGrace(successorHash, presented, token, caller, now) {
      const { rowCount } = await pool.query({
        name: "keyfob_record_refresh_reuse_within_grace",
        text: RECORD_REUSE_WITHIN_GRACE,
        values: [successorHash, presented.clientId, utc(now), ...issuedWithRefreshValues(presented, token, caller)],
      });
      return rowCount === 1;
    },

    revokeRefreshFamilies,

    async findFamily(familyId) {
      return (await db.refreshToken.findFirst({ where: { familyId }, select: { clientId: true, accountId: true } })) ?? undefined;
    },

    liveGrantPage(selector, skip, take, now) {
      return db.refreshToken.findMany({
        where: liveGrantWhere(selector, now),
        orderBy: { issuedAt: "desc" },
        skip,
        take,
        select: {
          familyId: true,
          clientId: true,
          accountId: true,
          connector: true,
          scope: true,
          issuedAt: true,
          expiresAt: true,
          familyExpiresAt: true,
        },
      });
    },

    countLiveGrants(selector, now) {
      return db.refreshToken.count({ where: liveGrantWhere(selector, now) });
    },

    async familyHistories(familyIds) {
      const families = await db.refreshToken.groupBy({
        by: ["familyId"],
        where: { familyId: { in: familyIds } },
        _min: { issuedAt: true },
        _count: { _all: true },
      });
      return families.map((f) => ({ familyId: f.familyId, grantedAt: f._min.issuedAt, tokens: f._count._all }));
    },
  };
}

const RECORD_VEHICLE_TOKEN = `WITH subject AS (
    SELECT s.user_id, s.connector, s.session_id, s.refresh_family FROM issued_tokens s JOIN clients c ON c.id = s.client_id
    WHERE s.jti = $1 AND s.client_id = $2 AND s.revoked_at IS NULL AND s.expires_at > $3 AND s.vehicle IS NULL
      AND c.enabled AND c.token_exchange
      AND (s.signer IS NULL OR EXISTS (SELECT 1 FROM signers g WHERE g.client_id = s.client_id AND g.address = s.signer
                                       AND g.revoked_at IS NULL AND (g.expires_at IS NULL OR g.expires_at > $3)))
      AND NOT EXISTS (SELECT 1 FROM accounts a WHERE a.id = s.user_id AND a.blocked_at IS NOT NULL)
  ), issued AS (
    INSERT INTO issued_tokens (jti, client_id, user_id, connector, scope, session_id, refresh_family, issued_at, expires_at,
                               vehicle, vehicle_privileges, chain_block, subject_jti)
    SELECT $4, $2, user_id, connector, $5, session_id, refresh_family, $3, $6, $7, $8, $9, $1 FROM subject
    RETURNING client_id, user_id
  )
  INSERT INTO audit_events (at, action, outcome, client_id, account_id, ip, detail)
  SELECT $3, 'token.exchanged', 'success', client_id, user_id, $10, $11 FROM issued`;

/** The last values of both refresh statements: the access token, the client's secret when it is checked, the caller. */
const issuedWithRefreshValues = (
  presented: { secretHash?: string | null },
  token: Pick<TokenRecord, "jti" | "scope" | "expiresAt">,
  caller: Caller,
) => [
  token.jti,
  token.scope,
  utc(token.expiresAt),
  presented.secretHash !== undefined,
  presented.secretHash ?? null,
  ...callerValues(caller),
];

/**
 * Refresh token `t` is `client`'s and usable at `now`: live, its client enabled, allowed refresh
 * tokens and, when `checked`, still holding `secret`; its account existing and unblocked.
 */
const usableRefreshToken = ({ client, now, checked, secret }: Record<"client" | "now" | "checked" | "secret", string>) =>
  `t.client_id = ${client} AND t.used_at IS NULL AND t.revoked_at IS NULL AND t.expires_at > ${now} AND t.family_expires_at > ${now}
      AND EXISTS (SELECT 1 FROM clients c WHERE c.id = t.client_id AND c.enabled AND c.refresh_tokens_allowed
                  AND (NOT ${checked}::boolean OR c.secret_hash IS NOT DISTINCT FROM ${secret}::text))
      AND EXISTS (SELECT 1 FROM accounts a WHERE a.id = t.account_id AND a.blocked_at IS NULL)`;

const ROTATE_REFRESH_TOKEN = `WITH used AS (
    UPDATE refresh_tokens t SET used_at = $3
    WHERE t.token_hash = $1 AND ${usableRefreshToken({ client: "$2", now: "$3", checked: "$9", secret: "$10" })}
    RETURNING t.family_id, t.client_id, t.account_id, t.connector, t.scope, t.email, t.email_verified, t.auth_time, t.amr, t.session_id, t.family_expires_at, t.dpop_jkt, t.resource
  ), successor AS (
    INSERT INTO refresh_tokens (token_hash, family_id, client_id, account_id, connector, scope, email, email_verified, auth_time, amr, session_id, issued_at, expires_at, family_expires_at, dpop_jkt, resource)
    SELECT $4, family_id, client_id, account_id, connector, scope, email, email_verified, auth_time, amr, session_id, $3, $5, family_expires_at, dpop_jkt, resource FROM used
  ), ${issuedWithEvent(
    `INSERT INTO issued_tokens (jti, client_id, user_id, connector, scope, refresh_family, issued_at, expires_at, session_id)
     SELECT $6, client_id, account_id, connector, $7, family_id, $3, $8, session_id FROM used`,
    { at: "$3", endpoint: "$11", ip: "$12" },
  )}`;

/**
 * The access token of a use within REFRESH_TOKEN_REUSE_GRACE, recorded for the family of successor
 * `$1` while that is usable. FOR SHARE: a revocation or a rotation of the successor committed since
 * this statement began is seen (READ COMMITTED re-reads a locked row), and one that comes after
 * waits for this token, which its family's next revocation pass then finds.
 */
const RECORD_REUSE_WITHIN_GRACE = `WITH successor AS (
    SELECT t.family_id, t.client_id, t.account_id, t.connector, t.session_id FROM refresh_tokens t
    WHERE t.token_hash = $1 AND ${usableRefreshToken({ client: "$2", now: "$3", checked: "$7", secret: "$8" })}
    FOR SHARE
  ), ${issuedWithEvent(
    `INSERT INTO issued_tokens (jti, client_id, user_id, connector, scope, refresh_family, issued_at, expires_at, session_id)
     SELECT $4, client_id, account_id, connector, $5, family_id, $3, $6, session_id FROM successor`,
    { at: "$3", endpoint: "$9", ip: "$10" },
  )}`;

/** A token record's values as the recording statements take them, after the client's: jti, user, connector, scope, issued, expires. */
const recordValues = (token: TokenRecord, now: Date) => [
  token.jti,
  token.userId,
  token.connector,
  token.scope,
  utc(now),
  utc(token.expiresAt),
];

/** tokens.recordLicenseToken: the checks of consuming a Flow A state (./challenges.ts), without a state. */
const RECORD_LICENSE_TOKEN = `WITH ${issuedWithEvent(
  `INSERT INTO issued_tokens (jti, client_id, user_id, connector, scope, issued_at, expires_at, signer)
   SELECT $2, c.id, $3, $4, $5, $6, $7, $8::text FROM clients c
   WHERE c.id = $1 AND c.enabled AND c.token_endpoint_auth_method = 'private_key_jwt'
     AND (NOT c.dpop_bound_access_tokens OR $9::boolean)
     AND NOT EXISTS (SELECT 1 FROM accounts a WHERE a.blocked_at IS NOT NULL AND (a.id = $3
                     OR a.id = (SELECT i.account_id FROM identities i WHERE i.provider = 'web3' AND i.subject = $3)))
     AND ($8::text IS NULL OR EXISTS (SELECT 1 FROM signers s WHERE s.client_id = c.id AND s.address = $8::text
                                      AND s.revoked_at IS NULL AND (s.expires_at IS NULL OR s.expires_at > $6)))`,
  { at: "$6", endpoint: "$10", ip: "$11" },
)}`;
