import { Prisma } from "../db/generated/client";
import { refusingDuplicates, type Connection } from "./connection";
import type { ClientSettings, ClientStore, PreviousSecret, SigningAlg } from "./contract";

/** The previous secret of a client row, when it has one. */
export const previousSecret = (row: { previousSecretHash: string | null; previousSecretExpiresAt: Date | null }): PreviousSecret | null =>
  row.previousSecretHash && row.previousSecretExpiresAt ? { hash: row.previousSecretHash, expiresAt: row.previousSecretExpiresAt } : null;

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
  tokenExchange: true,
  dpopBoundAccessTokens: true,
  resources: true,
  requireConsent: true,
  idTokenSignedResponseAlg: true,
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
export function clientStatements({ db, pool }: Connection): ClientStore {
  return {
    create(data) {
      return refusingDuplicates(db.client.create({ data }));
    },

    async find(id) {
      return (await db.client.findUnique({ where: { id } })) ?? undefined;
    },

    async findWithRedirectUri(id, redirectUri) {
      const client = await db.client.findUnique({
        where: { id },
        include: { redirectUris: { where: { uri: redirectUri }, select: { uri: true } } },
      });
      return client ? { ...client, redirectUriRegistered: client.redirectUris.length > 0 } : undefined;
    },

    async findWithPostLogoutUri(id, uri) {
      const client = await db.client.findUnique({
        where: { id },
        include: { postLogoutRedirectUris: { where: { uri }, select: { uri: true } } },
      });
      return client ? { ...client, postLogoutUriRegistered: client.postLogoutRedirectUris.length > 0 } : undefined;
    },

    /** The redirect URIs' origins and the allowed origins come as arrays of the one row. */
    async findForTokens(id) {
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
        token_exchange: boolean;
        resources: string[];
        token_endpoint_auth_method: string | null;
        jwks: unknown;
        jwks_uri: string | null;
        secret_sealed: string | null;
        id_token_signed_response_alg: SigningAlg;
        redirect_uris: string[];
        allowed_origins: string[];
      }>({
        name: "keyfob_client",
        // The overlap's end as epoch milliseconds: the column holds UTC digits without a zone.
        text: `SELECT c.id, c.enabled, c.secret_hash, c.previous_secret_hash,
                      EXTRACT(EPOCH FROM c.previous_secret_expires_at)::float8 * 1000 AS previous_secret_expires_ms,
                      c.resource_server, c.refresh_tokens_allowed,
                      CASE WHEN c.management_api THEN c.management_scopes END AS management_scopes,
                      c.dpop_bound_access_tokens, c.token_exchange, c.resources, c.token_endpoint_auth_method, c.jwks, c.jwks_uri, c.secret_sealed,
                      c.id_token_signed_response_alg,
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
        tokenExchange: row.token_exchange,
        resources: row.resources,
        tokenEndpointAuthMethod: row.token_endpoint_auth_method,
        jwks: row.jwks,
        jwksUri: row.jwks_uri,
        secretSealed: row.secret_sealed,
        idTokenSignedResponseAlg: row.id_token_signed_response_alg,
        origins: new Set([...row.redirect_uris.map((uri) => new URL(uri).origin), ...row.allowed_origins]),
      };
    },

    async detail(id) {
      return (await db.client.findUnique({ where: { id }, include: withLists("desc") })) ?? undefined;
    },

    listDetailed() {
      return db.client.findMany({ orderBy: { createdAt: "asc" }, include: withLists("asc") });
    },

    /** The counts as Prisma's relation counts (_count), under names of their own. */
    async summaryPage(search, skip, take) {
      const clients = await db.client.findMany({
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
      return clients.map(({ _count, ...client }) => ({
        ...client,
        redirectUriCount: _count.redirectUris,
        activeSignerCount: _count.signers,
      }));
    },

    count(search) {
      return db.client.count({ where: searchWhere(search) });
    },

    update(id, changes, check) {
      return db.$transaction(async (tx) => {
        const before = await tx.client.findUniqueOrThrow({ where: { id }, select: { ...SETTINGS, secretHash: true } });
        check(before);
        const after = await tx.client.update({ where: { id }, data: changes, select: SETTINGS });
        const { secretHash: _, ...settings } = before;
        return { before: settings as ClientSettings, after: after as ClientSettings };
      });
    },

    async setSecretHash(id, secretHash, previous = null, secretSealed = null) {
      await db.client.update({
        where: { id },
        data: {
          secretHash,
          previousSecretHash: previous?.hash ?? null,
          previousSecretExpiresAt: previous?.expiresAt ?? null,
          secretSealed,
        },
      });
    },

    async setAuthentication(id, { tokenEndpointAuthMethod, jwks, jwksUri }) {
      await db.client.update({
        where: { id },
        data: {
          tokenEndpointAuthMethod,
          jwks: jwks === null ? Prisma.DbNull : (jwks as Prisma.InputJsonValue),
          jwksUri,
          ...(tokenEndpointAuthMethod === "client_secret_jwt" ? {} : { secretSealed: null }),
        },
      });
    },

    async endSecretOverlap(id, now) {
      const { count } = await db.client.updateMany({
        where: { id, previousSecretHash: { not: null }, previousSecretExpiresAt: { gt: now } },
        data: { previousSecretHash: null, previousSecretExpiresAt: null },
      });
      return count > 0;
    },

    async delete(id) {
      await db.$executeRaw`
        WITH tokens AS (DELETE FROM issued_tokens WHERE client_id = ${id}),
             session_clients AS (DELETE FROM login_session_clients WHERE client_id = ${id}),
             challenges AS (DELETE FROM challenges WHERE client_id = ${id})
        DELETE FROM clients WHERE id = ${id}`;
    },

    async ensure(id, name, redirectUri) {
      await db.client.upsert({ where: { id }, create: { id, name }, update: { enabled: true } });
      await db.redirectUri.upsert({
        where: { clientId_uri: { clientId: id, uri: redirectUri } },
        create: { clientId: id, uri: redirectUri },
        update: {},
      });
    },

    addRedirectUri(clientId, uri) {
      return db.redirectUri.upsert({ where: { clientId_uri: { clientId, uri } }, create: { clientId, uri }, update: {} });
    },

    async removeRedirectUri(clientId, uri) {
      return (await db.redirectUri.deleteMany({ where: { clientId, uri } })).count > 0;
    },

    addPostLogoutRedirectUri(clientId, uri) {
      return db.postLogoutRedirectUri.upsert({ where: { clientId_uri: { clientId, uri } }, create: { clientId, uri }, update: {} });
    },

    async removePostLogoutRedirectUri(clientId, uri) {
      return (await db.postLogoutRedirectUri.deleteMany({ where: { clientId, uri } })).count > 0;
    },

    addAllowedOrigin(clientId, origin) {
      return db.allowedOrigin.upsert({ where: { clientId_origin: { clientId, origin } }, create: { clientId, origin }, update: {} });
    },

    async removeAllowedOrigin(clientId, origin) {
      return (await db.allowedOrigin.deleteMany({ where: { clientId, origin } })).count > 0;
    },

    async registeredResources() {
      const rows = await db.$queryRaw<{ resource: string }[]>`
        SELECT DISTINCT resource COLLATE "C" AS resource FROM clients, unnest(resources) AS resource WHERE enabled ORDER BY 1`;
      return rows.map((row) => row.resource);
    },

    async findSigner(clientId, address) {
      return (await db.signer.findUnique({ where: { clientId_address: { clientId, address } } })) ?? undefined;
    },

    enableSigner(clientId, address, expiresAt, now) {
      const data = { enabledAt: now, expiresAt, revokedAt: null };
      return db.signer.upsert({ where: { clientId_address: { clientId, address } }, create: { clientId, address, ...data }, update: data });
    },

    async revokeSigner(clientId, address, now) {
      return (await db.signer.updateMany({ where: { clientId, address, revokedAt: null }, data: { revokedAt: now } })).count > 0;
    },
  };
}

function searchWhere(search: string | undefined): Prisma.ClientWhereInput {
  return search ? { OR: [{ id: { contains: search, mode: "insensitive" } }, { name: { contains: search, mode: "insensitive" } }] } : {};
}
