import type { Connection } from "./connection";
import type { ConsentGrantStore } from "./contract";

/**
 * Consent grants (lib/consent): the scopes an account granted a client that requires consent, one
 * row per account and client, its scope the union of every consent given.
 */
export function consentGrantStatements({ db }: Connection): ConsentGrantStore {
  return {
    async find(accountId, clientId) {
      return (await db.consentGrant.findUnique({ where: { accountId_clientId: { accountId, clientId } } })) ?? undefined;
    },

    /** One statement: the insert, or the union with the stored scopes (never narrowing a concurrent grant's), sorted. */
    async grant(accountId, clientId, scope, now) {
      await db.$executeRaw`
        INSERT INTO consent_grants (account_id, client_id, scope, granted_at)
        VALUES (${accountId}, ${clientId}, ${[...new Set(scope)].sort().join(" ")}, ${now})
        ON CONFLICT (account_id, client_id) DO UPDATE SET
          scope = (SELECT string_agg(DISTINCT s COLLATE "C", ' ' ORDER BY s COLLATE "C")
                   FROM unnest(string_to_array(consent_grants.scope, ' ') || string_to_array(EXCLUDED.scope, ' ')) AS s),
          granted_at = EXCLUDED.granted_at`;
    },

    async listForAccount(accountId) {
      const rows = await db.consentGrant.findMany({
        where: { accountId },
        orderBy: { grantedAt: "desc" },
        include: { client: { select: { name: true, logoUrl: true } } },
      });
      return rows.map(({ client, ...grant }) => ({ ...grant, clientName: client.name, clientLogoUrl: client.logoUrl }));
    },

    async revoke(accountId, clientId, now) {
      // Every CTE runs, referenced or not. A redemption racing this waits on the code's row lock, then
      // sees it expired (READ COMMITTED re-reads it).
      const [{ deleted }] = await db.$queryRaw<{ deleted: number }[]>`
        WITH grant_row AS (
          DELETE FROM consent_grants WHERE account_id = ${accountId} AND client_id = ${clientId} RETURNING 1
        ), codes AS (
          UPDATE authorization_codes SET expires_at = ${now}
          WHERE account_id = ${accountId} AND client_id = ${clientId} AND used_at IS NULL AND expires_at > ${now}
            AND EXISTS (SELECT 1 FROM grant_row) RETURNING 1
        ), devices AS (
          UPDATE device_authorizations SET status = 'denied'
          WHERE account_id = ${accountId} AND client_id = ${clientId} AND status = 'approved' AND used_at IS NULL
            AND EXISTS (SELECT 1 FROM grant_row) RETURNING 1
        )
        SELECT (SELECT count(*) FROM grant_row)::int AS deleted`;
      return deleted === 1;
    },
  };
}
