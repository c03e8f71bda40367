import { generateClientId, normalizeClientId } from "../../clients/client-id";
import * as registry from "../../clients/registry";
import type { Keyfob } from "../../keyfob";
import { requireScope, type Admin } from "../access";
import { ADMIN_SCOPE, covers } from "../scopes";
import { change, changeObserved, differences, type AuditedStore } from "./audited";

/** Admin operations on clients: settings, lists, signers and secrets, each audited in its transaction. */
/** What a client is, for the audit log's before and after. */
async function clientState(k: Pick<Keyfob, "store">, id: string): Promise<Record<string, unknown> | null> {
  const client = await k.store.clients.detail(id);
  if (!client) return null;
  return {
    name: client.name,
    logoUrl: client.logoUrl,
    enabled: client.enabled,
    requirePkce: client.requirePkce,
    resourceServer: client.resourceServer,
    refreshTokensAllowed: client.refreshTokensAllowed,
    managementApi: client.managementApi,
    managementScopes: client.managementScopes,
    requirePushedAuthorizationRequests: client.requirePushedAuthorizationRequests,
    requireConsent: client.requireConsent,
    backchannelLogoutUri: client.backchannelLogoutUri,
    backchannelLogoutSessionRequired: client.backchannelLogoutSessionRequired,
    deviceFlow: client.deviceFlow,
    deviceFlowOfflineAccess: client.deviceFlowOfflineAccess,
    tokenExchange: client.tokenExchange,
    dpopBoundAccessTokens: client.dpopBoundAccessTokens,
    resources: client.resources,
    idTokenSignedResponseAlg: client.idTokenSignedResponseAlg,
    confidential: client.secretHash !== null,
    redirectUris: client.redirectUris.map((r) => r.uri),
    postLogoutRedirectUris: client.postLogoutRedirectUris.map((r) => r.uri),
    allowedOrigins: client.allowedOrigins.map((o) => o.origin),
    // Active signers, oldest first.
    signers: client.signers
      .filter((s) => s.revokedAt === null)
      .reverse()
      .map((s) => s.address),
  };
}

/** One part of a client's state (a list, a setting), for changes that touch only it. */
const clientPart =
  (id: string, ...parts: string[]) =>
  async (k: Pick<Keyfob, "store">) => {
    const state = await clientState(k, id);
    return state && Object.fromEntries(parts.map((part) => [part, state[part]]));
  };

export const createClient = (k: AuditedStore, admin: Admin, input: { id?: string; name: string; logoUrl?: string }) => {
  const id = input.id?.trim() ? normalizeClientId(input.id.trim()) : generateClientId();
  return change(
    k,
    admin,
    "client.created",
    { clientId: id },
    (tx) => registry.createClient(tx.store, { ...input, id }),
    (client) => `created: ${JSON.stringify({ name: client.name, logoUrl: client.logoUrl, enabled: client.enabled })}`,
  );
};

export const setClientEnabled = (k: AuditedStore, admin: Admin, clientId: string, enabled: boolean) =>
  change(
    k,
    admin,
    enabled ? "client.enabled" : "client.disabled",
    { clientId: normalizeClientId(clientId) },
    (tx) => registry.updateClient(tx.store, clientId, { enabled }),
    ({ before, after }) => differences({ enabled: before.enabled }, { enabled: after.enabled }),
  );

export const deleteClient = (k: AuditedStore, admin: Admin, clientId: string) => {
  const id = normalizeClientId(clientId);
  return changeObserved(
    k,
    admin,
    "client.deleted",
    { clientId: id },
    (tx) => clientState(tx, id),
    (tx) => registry.deleteClient(tx.store, clientId),
  );
};

const listChange =
  (action: string, part: string, op: (store: Keyfob["store"], clientId: string, value: string) => Promise<unknown>) =>
  (k: AuditedStore, admin: Admin, clientId: string, value: string) => {
    const id = normalizeClientId(clientId);
    return changeObserved(k, admin, action, { clientId: id, detail: value }, clientPart(id, part), (tx) =>
      op(tx.store, clientId, value),
    ).then(() => undefined);
  };

export const addRedirectUri = listChange("redirect_uri.added", "redirectUris", registry.addRedirectUri);
export const removeRedirectUri = listChange("redirect_uri.removed", "redirectUris", registry.removeRedirectUri);
export const addPostLogoutRedirectUri = listChange(
  "post_logout_redirect_uri.added",
  "postLogoutRedirectUris",
  registry.addPostLogoutRedirectUri,
);
export const removePostLogoutRedirectUri = listChange(
  "post_logout_redirect_uri.removed",
  "postLogoutRedirectUris",
  registry.removePostLogoutRedirectUri,
);
export const addAllowedOrigin = listChange("allowed_origin.added", "allowedOrigins", registry.addAllowedOrigin);
export const removeAllowedOrigin = listChange("allowed_origin.removed", "allowedOrigins", registry.removeAllowedOrigin);

/** Changes a client's settings (name, logo, enabled, PKCE, resource server, refresh tokens, management API, DPoP), audited with each changed value before and after. */
export async function updateClient(k: AuditedStore, admin: Admin, clientId: string, changes: Partial<registry.ClientSettings>) {
  const defined = Object.fromEntries(
    Object.entries(changes).filter(([, value]) => value !== undefined),
  ) as Partial<registry.ClientSettings>;
  const { after } = await change(
    k,
    admin,
    "client.updated",
    { clientId: normalizeClientId(clientId) },
    async (tx) => {
      // Withdrawing the API or a scope grants nothing; allowing either does.
      const current = await tx.store.clients.find(normalizeClientId(clientId));
      const grants =
        current &&
        ((defined.managementApi === true && !current.managementApi) ||
          defined.managementScopes?.some((scope) => !covers(current.managementScopes, scope)));
      if (grants) requireScope(admin, ADMIN_SCOPE, "allowing a client the management API or a scope of it");
      return registry.updateClient(tx.store, clientId, defined, k.config);
    },
    ({ before, after }) => differences(before, after),
  );
  return after;
}

/** A management client's secret gets its scopes: replacing it, or ending its overlap, needs keyfob:admin. */
async function requireScopeForSecret(k: Pick<Keyfob, "store">, admin: Admin, clientId: string) {
  if ((await k.store.clients.find(clientId))?.managementApi) requireScope(admin, ADMIN_SCOPE, "changing a management API client's secret");
}

/** A signer as the audit log shows it: its status and expiry. */
async function signerState(k: Pick<Keyfob, "store" | "clock">, clientId: string, address: string) {
  let signer: string;
  try {
    signer = registry.parseAddress(address);
  } catch {
    return {};
  }
  const row = await k.store.clients.findSigner(clientId, signer);
  const status = !row ? "none" : row.revokedAt ? "revoked" : row.expiresAt && row.expiresAt <= k.clock.now() ? "expired" : "active";
  return { [signer]: row && status === "active" && row.expiresAt ? `active until ${row.expiresAt.toISOString()}` : status };
}

/**
 * Sets how a client authenticates (private_key_jwt, client_secret_jwt, or null: its secret) and its
 * keys, audited with the method, the jwks_uri and the keys' kids before and after. Like a new
 * secret, it needs keyfob:admin for a management API client.
 */
export const setClientAuthentication = (
  k: AuditedStore,
  admin: Admin,
  clientId: string,
  authentication: Parameters<typeof registry.setClientAuthentication>[2],
) => {
  const id = normalizeClientId(clientId);
  return changeObserved(
    k,
    admin,
    "client.authentication_set",
    { clientId: id },
    (tx) => authenticationState(tx, id),
    async (tx) => {
      await requireScopeForSecret(tx, admin, id);
      await registry.setClientAuthentication(tx.store, clientId, authentication, tx.config);
    },
  );
};

/** How a client authenticates, for the audit log: never a key's material, only its kid. */
async function authenticationState(k: Pick<Keyfob, "store">, id: string): Promise<Record<string, unknown> | null> {
  const client = await k.store.clients.find(id);
  if (!client) return null;
  const keys = (client.jwks as { keys?: { kid?: string }[] } | null)?.keys;
  return {
    tokenEndpointAuthMethod: client.tokenEndpointAuthMethod,
    jwksUri: client.jwksUri,
    jwks: keys ? keys.map((key) => key.kid ?? "(no kid)") : null,
  };
}

export const addSigner = (k: AuditedStore, admin: Admin, clientId: string, address: string, expiresAt?: Date) => {
  const id = normalizeClientId(clientId);
  return changeObserved(
    k,
    admin,
    "signer.added",
    { clientId: id, detail: address },
    (tx) => signerState(tx, id, address),
    (tx) => registry.addSigner(tx, clientId, address, expiresAt),
  );
};

export const revokeSigner = (k: AuditedStore, admin: Admin, clientId: string, address: string) => {
  const id = normalizeClientId(clientId);
  return changeObserved(
    k,
    admin,
    "signer.revoked",
    { clientId: id, detail: address },
    (tx) => signerState(tx, id, address),
    (tx) => registry.revokeSigner(tx, clientId, address),
  );
};

/**
 * Generates or rotates the client's secret; the only time it is seen is in the return value (never
 * in the audit log). With `overlapSeconds`, the replaced secret stays valid that long; the result
 * says until when (null: it stopped at once).
 */
export const rotateClientSecret = (k: AuditedStore, admin: Admin, clientId: string, overlapSeconds?: number) => {
  const id = normalizeClientId(clientId);
  let wasConfidential = false;
  return change(
    k,
    admin,
    "client.secret_rotated",
    { clientId: id },
    async (tx) => {
      await requireScopeForSecret(tx, admin, id);
      wasConfidential = (await tx.store.clients.find(id))?.secretHash != null;
      const secret = await registry.rotateClientSecret(tx, clientId, { overlapSeconds });
      const previousSecretExpiresAt = (await tx.store.clients.find(id))?.previousSecretExpiresAt ?? null;
      return { secret, previousSecretExpiresAt };
    },
    ({ previousSecretExpiresAt }) =>
      wasConfidential
        ? `confidential: true -> true (secret replaced; ${previousSecretExpiresAt ? `the previous one valid until ${previousSecretExpiresAt.toISOString()}` : "the previous one stopped at once"})`
        : "confidential: false -> true",
  );
};

/** Ends a secret rotation's overlap early: the replaced secret stops working now. */
export const endSecretOverlap = (k: AuditedStore, admin: Admin, clientId: string) => {
  const id = normalizeClientId(clientId);
  let until: Date | null = null;
  return change(
    k,
    admin,
    "client.secret_overlap_ended",
    { clientId: id },
    async (tx) => {
      await requireScopeForSecret(tx, admin, id);
      until = (await tx.store.clients.find(id))?.previousSecretExpiresAt ?? null;
      await registry.endSecretOverlap(tx, clientId);
    },
    () => `previous secret valid until: ${JSON.stringify(until?.toISOString() ?? null)} -> "ended"`,
  );
};

// Signing keys, tokens, admins.
