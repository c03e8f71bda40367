import type { RequestColumn } from "./batch";
import { refusingDuplicates, utc, utcTypes, type Connection } from "./connection";
import type { DeviceAuthorizationStore, DevicePollRow } from "./contract";
import { ACCOUNT_ACTIVE, grantRedeemer, type GrantRequest } from "./grants";

/**
 * Device authorizations (RFC 8628): created by /device_authorization, their user code entered (or
 * declined) once on /device, approved or denied once by the hosted login, polled by the device and
 * redeemed once (./grants.ts, batched).
 */

export function deviceAuthorizationStatements({ db, pool }: Connection): DeviceAuthorizationStore {
  const redeemDeviceCodes = grantRedeemer(pool, "redeem_device_codes", REDEEM_DEVICE_CODE);
  return {
    async create(data) {
      await refusingDuplicates(db.deviceAuthorization.create({ data }));
    },

    async findByUserCode(userCodeHash, now) {
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

    /** The update and the insert are two CTEs of one statement: only a confirmation that used the code up inserts. */
    async enterUserCode(userCodeHash, interaction, now) {
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

    async declineUserCode(userCodeHash, now) {
      const [row] = await db.deviceAuthorization.updateManyAndReturn({
        where: { userCodeHash, status: "pending", expiresAt: { gt: now } },
        data: { userCodeHash: null, status: "denied" },
        select: { clientId: true },
      });
      return row?.clientId;
    },

    /** One conditional update: only a pending row is changed, so one call of concurrent ones settles it. */
    async settle(deviceCodeHash, now, outcome) {
      const { count } = await db.deviceAuthorization.updateMany({
        where: { deviceCodeHash, status: "pending", expiresAt: { gt: now } },
        data: "approved" in outcome ? { status: "approved", ...outcome.approved } : { status: "denied" },
      });
      return count === 1;
    },

    /** The row is locked (FOR UPDATE) while the poll is recorded: a concurrent poll waits for this one's. */
    async poll(deviceCodeHash, now) {
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

    /** As ./authorization-codes.ts redeems a code: one statement, batched (./grants.ts). */
    redeem(deviceCodeHash, redemption, caller, now) {
      return redeemDeviceCodes({ hash: deviceCodeHash, redemption, caller, now });
    },
  };
}

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
      d.auth_time, d.amr, d.resource, d.expires_at, c.refresh_tokens_allowed AND c.device_flow_offline_access AS refresh_tokens_allowed`,
};
