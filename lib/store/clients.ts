import type { Prisma } from "../db/generated/client";
import { refusingDuplicates, type Connection } from "./connection";

/** What the token endpoints and CORS need of a client (lib/clients/cache.ts keeps them in memory). */
export type TokenClientRow = {
  id: string;
  enabled: boolean;
  /** SHA-256 of the client secret (confidential clients), else null. */
  secretHash: string | null;
  /** The secret the last rotation replaced and until when it is still accepted (a rotation's overlap), if any. */
  previousSecret: PreviousSecret | null;
  resourceServer: boolean;
  refreshTokensAllowed: boolean;
  /** The management API scopes the client may get (client_credentials); none unless an admin allowed it the API. */
  managementScopes: string[];
  /** Token requests must carry a DPoP proof (RFC 9449 5.2). */
  dpopBoundAccessTokens: boolean;
  /** Browser origins allowed for the client: its redirect URIs' origins and the extra allowed origins. */
  origins: ReadonlySet<string>;
};

export type PreviousSecret = { hash: string; expiresAt: Date };

/** The previous secret of a client row, when it has one. */
export const previousSecret = (row: { previousSecretHash: string | null; previousSecretExpiresAt: Date | null }): PreviousSecret | null =>
  row.previousSecretHash && row.previousSecretExpiresAt ? { hash: row.previousSecretHash, expiresAt: row.previousSecretExpiresAt } : null;

/** The settings of a client that can change after it is created. */
export type ClientSettings = {
  name: string;
  logoUrl: string | null;
  /** PKCE for a confidential client too (public clients always need it). */
  requirePkce: boolean;
  /** May introspect other clients' tokens. */
  resourceServer: boolean;
  /** May ask for offline_access and get refresh tokens. */
  refreshTokensAllowed: boolean;
  /** Disabled: both flows refuse the client at once. */
  enabled: boolean;
  /** May use the management API: a client_credentials token. Confidential clients only. */
  managementApi: boolean;
  /** The management API scopes it may get (lib/admin/scopes.ts, which the admin actions check). */
  managementScopes: string[];
  /** Authorization requests only through PAR (RFC 9126 6). */
  requirePushedAuthorizationRequests: boolean;
  /** Where logout tokens are POSTed (Back-Channel Logout 1.0); null: none. */
  backchannelLogoutUri: string | null;
  /** The client needs `sid` in ID and logout tokens. */
  backchannelLogoutSessionRequired: boolean;
  /** May use the device authorization grant (RFC 8628). */
  deviceFlow: boolean;
  /** Its device grants may carry offline_access (a refresh token), if it is allowed refresh tokens too. */
  deviceFlowOfflineAccess: boolean;
  /** Token requests must carry a DPoP proof: its access tokens are always bound to a key (RFC 9449 5.2). */
  dpopBoundAccessTokens: boolean;
};

const SETTINGS = {
  name: true,
  logoUrl: true,
  enabled: true,
  requirePkce: true,
  resourceServer: true,
  refreshTokensAllowed: true,
  managementApi: true,
  managementScopes: true,
  requirePushedAuthorizationRequests: true,
  backchannelLogoutUri: true,
  backchannelLogoutSessionRequired: true,
  deviceFlow: true,
  deviceFlowOfflineAccess: true,
  dpopBoundAccessTokens: true,
} as const;

/** Each client's redirect URIs, post-logout redirect URIs and allowed origins in the order they were added; its signers by `signers`. */
const withLists = (signers: "asc" | "desc") =>
  ({
    redirectUris: { orderBy: { createdAt: "asc" } },
    postLogoutRedirectUris: { orderBy: { createdAt: "asc" } },
    allowedOrigins: { orderBy: { createdAt: "asc" } },
    signers: { orderBy: { enabledAt: signers } },
  }) satisfies Prisma.ClientInclude;

/** Clients with their redirect URIs, post-logout redirect URIs, allowed origins and signers. */
export function clientStatements({ db, pool }: Connection) {
  return {
    /** A new client; Duplicate when the id is taken. */
    create(data: { id: string; name: string; logoUrl: string | null }) {
      return refusingDuplicates(db.client.create({ data }));
    },

    async find(id: string) {
      return (await db.client.findUnique({ where: { id } })) ?? undefined;
    },

    /** A client with whether `redirectUri` is one of its redirect URIs. */
    async findWithRedirectUri(id: string, redirectUri: string) {
      const client = await db.client.findUnique({
        where: { id },
        include: { redirectUris: { where: { uri: redirectUri }, select: { uri: true } } },
      });
      return client ? { ...client, redirectUriRegistered: client.redirectUris.length > 0 } : undefined;
    },

    /** A client with whether `uri` is one of its post-logout redirect URIs. */
    async findWithPostLogoutUri(id: string, uri: string) {
      const client = await db.client.findUnique({
        where: { id },
        include: { postLogoutRedirectUris: { where: { uri }, select: { uri: true } } },
      });
      return client ? { ...client, postLogoutUriRegistered: client.postLogoutRedirectUris.length > 0 } : undefined;
    },

    /** One round trip: the client with its redirect URIs' origins and its allowed origins (the client cache's load). */
    async findForTokens(id: string): Promise<TokenClientRow | undefined> {
      const { rows } = await pool.query<{
        id: string;
        enabled: boolean;
        secret_hash: string | null;
        previous_secret_hash: string | null;
        previous_secret_expires_ms: number | null;
        resource_server: boolean;
        refresh_tokens_allowed: boolean;
        management_scopes: string[] | null;
        dpop_bound_access_tokens: boolean;
        redirect_uris: string[];
        allowed_origins: string[];
      }>({
        name: "keyfob_client",
        // The overlap's end as epoch milliseconds: the column holds UTC digits without a zone.
        text: `SELECT c.id, c.enabled, c.secret_hash, c.previous_secret_hash,
                      EXTRACT(EPOCH FROM c.previous_secret_expires_at)::float8 * 1000 AS previous_secret_expires_ms,
                      c.resource_server, c.refresh_tokens_allowed,
                      CASE WHEN c.management_api THEN c.management_scopes END AS management_scopes,
                      c.dpop_bound_access_tokens,
                      ARRAY(SELECT r.uri FROM redirect_uris r WHERE r.client_id = c.id) AS redirect_uris,
                      ARRAY(SELECT o.origin FROM allowed_origins o WHERE o.client_id = c.id) AS allowed_origins
               FROM clients c WHERE c.id = $1`,
        values: [id],
      });
      const row = rows[0];
      if (!row) return undefined;
      return {
        id: row.id,
        enabled: row.enabled,
        secretHash: row.secret_hash,
        previousSecret: previousSecret({
          previousSecretHash: row.previous_secret_hash,
          previousSecretExpiresAt: row.previous_secret_expires_ms === null ? null : new Date(row.previous_secret_expires_ms),
        }),
        resourceServer: row.resource_server,
        refreshTokensAllowed: row.refresh_tokens_allowed,
        managementScopes: row.management_scopes ?? [],
        dpopBoundAccessTokens: row.dpop_bound_access_tokens,
        origins: new Set([...row.redirect_uris.map((uri) => new URL(uri).origin), ...row.allowed_origins]),
      };
    },

    /** A client with its lists, signers newest first. */
    async detail(id: string) {
      return (await db.client.findUnique({ where: { id }, include: withLists("desc") })) ?? undefined;
    },

    /** Every client with its lists, oldest first (the command line's list). */
    listDetailed() {
      return db.client.findMany({ orderBy: { createdAt: "asc" }, include: withLists("asc") });
    },

    /** A page of clients whose id or name contains `search` (any case), newest first, with how many redirect URIs and active signers each has. */
    summaryPage(search: string | undefined, skip: number, take: number) {
      return db.client.findMany({
        where: searchWhere(search),
        orderBy: { createdAt: "desc" },
        skip,
        take,
        select: {
          id: true,
          name: true,
          logoUrl: true,
          enabled: true,
          createdAt: true,
          _count: { select: { redirectUris: true, signers: { where: { revokedAt: null } } } },
        },
      });
    },

    count(search?: string) {
      return db.client.count({ where: searchWhere(search) });
    },

    /** Changes some settings; returns them before and after, with the secret's hash before. `check` may refuse the change in its transaction. */
    update(id: string, changes: Partial<ClientSettings>, check: (before: ClientSettings & { secretHash: string | null }) => void) {
      return db.$transaction(async (tx) => {
        const before = await tx.client.findUniqueOrThrow({ where: { id }, select: { ...SETTINGS, secretHash: true } });
        check(before);
        const after = await tx.client.update({ where: { id }, data: changes, select: SETTINGS });
        const { secretHash: _, ...settings } = before;
        return { before: settings as ClientSettings, after: after as ClientSettings };
      });
    },

    /** A new secret; `previous` keeps the one it replaces valid for a while (null: it stops at once). */
    async setSecretHash(id: string, secretHash: string, previous: PreviousSecret | null = null): Promise<void> {
      await db.client.update({
        where: { id },
        data: { secretHash, previousSecretHash: previous?.hash ?? null, previousSecretExpiresAt: previous?.expiresAt ?? null },
      });
    },

    /** Ends a rotation's overlap now: the previous secret stops working. False when none was still valid at `now`. */
    async endSecretOverlap(id: string, now: Date): Promise<boolean> {
      const { count } = await db.client.updateMany({
        where: { id, previousSecretHash: { not: null }, previousSecretExpiresAt: { gt: now } },
        data: { previousSecretHash: null, previousSecretExpiresAt: null },
      });
      return count > 0;
    },

    /**
     * Deletes the client with what is its: the rows its foreign keys cascade to and, in the same
     * statement, those that carry its id without one (its token records, session links and
     * challenges: prisma/schema.prisma says why).
     */
    async delete(id: string): Promise<void> {
      await db.$executeRaw`
        WITH tokens AS (DELETE FROM issued_tokens WHERE client_id = ${id}),
             session_clients AS (DELETE FROM login_session_clients WHERE client_id = ${id}),
             challenges AS (DELETE FROM challenges WHERE client_id = ${id})
        DELETE FROM clients WHERE id = ${id}`;
    },

    /** Registers the dashboard's own client, enabled, with `redirectUri` (idempotent). */
    async ensure(id: string, name: string, redirectUri: string): Promise<void> {
      await db.client.upsert({ where: { id }, create: { id, name }, update: { enabled: true } });
      await db.redirectUri.upsert({
        where: { clientId_uri: { clientId: id, uri: redirectUri } },
        create: { clientId: id, uri: redirectUri },
        update: {},
      });
    },

    addRedirectUri(clientId: string, uri: string) {
      return db.redirectUri.upsert({ where: { clientId_uri: { clientId, uri } }, create: { clientId, uri }, update: {} });
    },

    /** Removes a redirect URI; false when the client had none such. */
    async removeRedirectUri(clientId: string, uri: string): Promise<boolean> {
      return (await db.redirectUri.deleteMany({ where: { clientId, uri } })).count > 0;
    },

    addPostLogoutRedirectUri(clientId: string, uri: string) {
      return db.postLogoutRedirectUri.upsert({ where: { clientId_uri: { clientId, uri } }, create: { clientId, uri }, update: {} });
    },

    async removePostLogoutRedirectUri(clientId: string, uri: string): Promise<boolean> {
      return (await db.postLogoutRedirectUri.deleteMany({ where: { clientId, uri } })).count > 0;
    },

    addAllowedOrigin(clientId: string, origin: string) {
      return db.allowedOrigin.upsert({ where: { clientId_origin: { clientId, origin } }, create: { clientId, origin }, update: {} });
    },

    async removeAllowedOrigin(clientId: string, origin: string): Promise<boolean> {
      return (await db.allowedOrigin.deleteMany({ where: { clientId, origin } })).count > 0;
    },

    async findSigner(clientId: string, address: string) {
      return (await db.signer.findUnique({ where: { clientId_address: { clientId, address } } })) ?? undefined;
    },

    /** Enables a signer, anew if it was revoked or expired. */
    enableSigner(clientId: string, address: string, expiresAt: Date | null) {
      const data = { enabledAt: new Date(), expiresAt, revokedAt: null };
      return db.signer.upsert({ where: { clientId_address: { clientId, address } }, create: { clientId, address, ...data }, update: data });
    },

    /** Revokes an active signer; false when there was none. */
    async revokeSigner(clientId: string, address: string): Promise<boolean> {
      return (await db.signer.updateMany({ where: { clientId, address, revokedAt: null }, data: { revokedAt: new Date() } })).count > 0;
    },
  };
}

function searchWhere(search: string | undefined): Prisma.ClientWhereInput {
  return search ? { OR: [{ id: { contains: search, mode: "insensitive" } }, { name: { contains: search, mode: "insensitive" } }] } : {};
}
