import * as blocking from "../accounts/blocking";
import * as directory from "../accounts/directory";
import type { AuditEntry } from "../audit";
import { generateClientId, normalizeClientId } from "../clients/client-id";
import * as registry from "../clients/registry";
import type { Keyfob } from "../keyfob";
import type {
  AccountView,
  AdminRoleRow,
  AuditFilter,
  ClientDetailRow,
  ClientSummaryRow,
  IssuedTokenRow,
  KeyHistoryRow,
  LiveGrantRow,
  LiveSessionRow,
} from "../store/contract";
import type { KeyRevocation, KeyRotation, KeyScheduleEntry } from "../keys/keystore";
import { liveSessions, revokeSessions as endSessions } from "../sessions/login-session";
import { InsufficientScope, isAdmin, requireScope, type Admin } from "./access";
import { ADMIN_SCOPE, covers } from "./scopes";
import { revokeAdminSessions } from "./session";

/**
 * What admins can do, for the dashboard, the command line and the management API alike (through
 * lib/admin/changes.ts). Every change takes the Admin that requireAdmin, the CLI or the API
 * vouched for, and is written to the audit log with what it changed (before -> after), in the
 * change's transaction; refused ones too, with the reason.
 *
 * Scopes (lib/admin/scopes.ts): a caller never gives a scope it lacks, so what could hand out the
 * management API needs keyfob:admin, which holds them all: allowing a client the API or a scope of
 * it (withdrawing either grants nothing), and rotating or ending the overlap of a management
 * client's secret (the new secret gets that client's scopes). Acting on an account that is an admin (granted the role,
 * configured, or by email) needs keyfob:admin too, so that keyfob:accounts cannot lock admins out.
 */

export const PAGE_SIZE = 20;
export type Page<T> = { items: T[]; total: number; page: number; pageSize: number };

type Target = Pick<AuditEntry, "clientId" | "accountId" | "detail">;

/** A change's audit detail: what it was about, then what changed. */
const joined = (...parts: (string | undefined)[]) => parts.filter(Boolean).join("; ") || undefined;

/** Why a change failed, for the audit log: a refusal's field and message; for anything else its kind only. */
export function failureReason(error: unknown): string {
  if (error instanceof registry.RegistryError) return `${error.field}: ${error.message}`;
  if (error instanceof InsufficientScope) return error.message;
  if (error instanceof Error)
    return `${error.name}${(error as { code?: unknown }).code ? ` ${String((error as { code?: unknown }).code)}` : ""}`;
  return typeof error;
}

/** What the admin operations use of the Keyfob: the store and the audit log, the configuration and the clock. */
type AuditedStore = Pick<Keyfob, "config" | "clock" | "store" | "audit">;

/**
 * What a change runs with: everything that writes works on the transaction (its store, and an audit
 * log whose records commit with the change or not at all), beside the configuration and the clock.
 * Nothing else of the Keyfob, whose key store, client cache and buffered audit log work on the pool.
 */
type AdminTransaction = Pick<Keyfob, "config" | "clock" | "store"> & { audit: { write(entry: AuditEntry): Promise<void> } };

/**
 * Runs a change and audits it, in one transaction: `run` gets the transaction (AdminTransaction),
 * and the audit record commits with what it changed, or neither does (the record was written after
 * the change, so a failure between them left a change without its record). `describe` turns the
 * result into the detail's "what changed" part. A change
 * that fails is rolled back and audited apart: a refusal (RegistryError) as `rejected`, anything
 * else as `error`, each with the reason after the target's detail.
 */
async function change<T>(
  k: AuditedStore,
  admin: Admin,
  action: string,
  target: Target,
  run: (tx: AdminTransaction) => Promise<T>,
  describe?: (result: T) => string | undefined,
): Promise<T> {
  const entry = { actor: admin.label, action, clientId: target.clientId, accountId: target.accountId };
  try {
    return await k.store.transaction(async (store) => {
      const tx: AdminTransaction = { config: k.config, clock: k.clock, store, audit: { write: (e) => k.audit.writeWithin(store, e) } };
      const result = await run(tx);
      await tx.audit.write({ ...entry, outcome: "success", detail: joined(target.detail, describe?.(result)) });
      return result;
    });
  } catch (error) {
    await failed(k, entry, target.detail, error);
    throw error;
  }
}

/** Audits a change that failed (and changed nothing): `rejected` for a refusal, else `error`, with the reason. */
function failed(k: Pick<Keyfob, "audit">, entry: Omit<AuditEntry, "outcome" | "detail">, detail: string | undefined, error: unknown) {
  const outcome = error instanceof registry.RegistryError ? "rejected" : error instanceof InsufficientScope ? "forbidden" : "error";
  return k.audit.write({ ...entry, outcome, detail: joined(detail, failureReason(error)) });
}

/** `field: before -> after` for each field that differs (JSON values), or "no change". */
export function differences(before: Record<string, unknown>, after: Record<string, unknown>): string {
  const fields = [...new Set([...Object.keys(before), ...Object.keys(after)])];
  const changed = fields.filter((field) => JSON.stringify(before[field]) !== JSON.stringify(after[field]));
  return (
    changed.map((field) => `${field}: ${JSON.stringify(before[field] ?? null)} -> ${JSON.stringify(after[field] ?? null)}`).join("; ") ||
    "no change"
  );
}

/** A change whose audit detail is the difference of `read()` before and after it (null: absent), read in its transaction. */
async function changeObserved<T>(
  k: AuditedStore,
  admin: Admin,
  action: string,
  target: Target,
  read: (tx: AdminTransaction) => Promise<Record<string, unknown> | null>,
  run: (tx: AdminTransaction) => Promise<T>,
): Promise<T> {
  let observed = "";
  const observe = async (tx: AdminTransaction) => {
    const before = await read(tx);
    const result = await run(tx);
    const after = await read(tx);
    observed =
      before === null
        ? `created: ${JSON.stringify(after)}`
        : after === null
          ? `deleted: ${JSON.stringify(before)}`
          : differences(before, after);
    return result;
  };
  return change(k, admin, action, target, observe, () => observed);
}

// Clients, redirect URIs, signers, secrets.

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
    backchannelLogoutUri: client.backchannelLogoutUri,
    backchannelLogoutSessionRequired: client.backchannelLogoutSessionRequired,
    deviceFlow: client.deviceFlow,
    deviceFlowOfflineAccess: client.deviceFlowOfflineAccess,
    dpopBoundAccessTokens: client.dpopBoundAccessTokens,
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

/** Acting on an admin's account (blocking, deleting, revoking what it holds) needs keyfob:admin. */
async function requireScopeForAccount(k: Pick<Keyfob, "store" | "config">, admin: Admin, accountId: string | undefined) {
  if (accountId && (await isAdmin(k, accountId))) requireScope(admin, ADMIN_SCOPE, "acting on an admin's account");
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

/** Starts a rotation (KeyStore.rotateNow), audited as `key.rotated` in its transaction. */
export async function rotateSigningKey(k: Pick<Keyfob, "keys" | "audit">, admin: Admin): Promise<KeyRotation> {
  const entry = { actor: admin.label, action: "key.rotated" };
  try {
    return await k.keys.rotateNow((tx, { before, after }) =>
      k.audit.writeWithin(tx, {
        ...entry,
        outcome: "success",
        detail: before
          ? `a rotation was already under way (upcoming ${before}); nothing changed`
          : differences({ upcoming: before }, { upcoming: after }),
      }),
    );
  } catch (error) {
    await failed(k, entry, undefined, error);
    throw error;
  }
}

/**
 * Emergency revocation of a signing key (KeyStore.revoke): it leaves the JWKS and never signs
 * again, every token it signed is refused from the next request on every instance, and if it was
 * the current key a new one signs at once. An unknown kid is refused (field `kid`); an already
 * revoked key is left as it is and said so. Audited as `key.revoked` with the kid, in the
 * revocation's transaction.
 */
export async function revokeSigningKey(k: Pick<Keyfob, "keys" | "audit">, admin: Admin, kid: string): Promise<SigningKeyRevocation> {
  kid = kid.trim();
  const entry = { actor: admin.label, action: "key.revoked" };
  let result: KeyRevocation;
  try {
    result = await k.keys.revoke(kid, admin.label, (tx, revocation) =>
      k.audit.writeWithin(tx, {
        ...entry,
        outcome: "success",
        detail:
          revocation.outcome === "already-revoked"
            ? `${kid} (already revoked); no change`
            : `${kid}; status: ${JSON.stringify(revocation.was)} -> "revoked"${revocation.successor ? `; current: ${JSON.stringify(kid)} -> ${JSON.stringify(revocation.successor)}` : ""}`,
      }),
    );
  } catch (error) {
    await failed(k, entry, kid, error);
    throw error;
  }
  if (result.outcome === "unknown" || result.outcome === "unpublished") {
    const refusal = new registry.RegistryError(
      "kid",
      result.outcome === "unknown"
        ? `no signing key has the kid ${kid}`
        : `signing key ${kid} retired and left the JWKS on ${result.unpublishedAt.toISOString()} (every token it signed had expired); nothing to revoke`,
    );
    await failed(k, entry, kid, refusal);
    throw refusal;
  }
  if (result.outcome === "already-revoked") {
    const message = `signing key ${kid} was already revoked on ${result.revokedAt.toISOString()}${result.revokedBy ? ` by ${result.revokedBy}` : ""}; nothing changed`;
    return { kid, revoked: false, message };
  }
  const message = result.successor
    ? `signing key ${kid} revoked; new key ${result.successor} signs from now`
    : `signing key ${kid} (${result.was}) revoked; the current key keeps signing`;
  return { kid, revoked: true, was: result.was, successor: result.successor, message };
}

export type SigningKeyRevocation = {
  kid: string;
  revoked: boolean;
  was?: "current" | "upcoming" | "retired";
  successor?: string;
  message: string;
};

/** The user ids whose tokens are an account's: its own and its linked wallets' (Flow A tokens name the wallet). */
async function tokenHolders(k: Pick<Keyfob, "store">, accountId: string | undefined) {
  return accountId ? await k.store.accounts.holders(accountId) : undefined;
}

/** The account a token's user id belongs to: the account of that id, or the one its wallet is linked to. */
async function holderAccount(k: Pick<Keyfob, "store">, userId: string): Promise<string | undefined> {
  if (!/^0x[0-9a-fA-F]{40}$/.test(userId)) return undefined;
  const found = await directory.findAccount(k.store, userId);
  return found && "id" in found ? found.id : undefined;
}

/** Revokes one token, or every active token of a client or an account (its linked wallets' too). Returns how many were revoked. */
export async function revokeTokens(k: AuditedStore, admin: Admin, target: { jti?: string; clientId?: string; accountId?: string }) {
  // A single token is audited under its own client and account, so filtering the log by either finds it.
  const token = target.jti ? await k.store.tokens.find(target.jti) : undefined;
  const clientId = target.clientId ? normalizeClientId(target.clientId) : token?.clientId;
  const accountId = target.accountId ? normalizeAccountId(target.accountId) : token?.userId;
  return change(
    k,
    admin,
    "token.revoked",
    { clientId, accountId, detail: target.jti },
    async (tx) => {
      if (!target.jti && !clientId && !accountId) throw new registry.RegistryError("target", "name a token, a client or an account");
      await requireScopeForAccount(tx, admin, accountId && (await holderAccount(tx, accountId)));
      return tx.store.tokens.revokeActive(
        target.jti ? { jti: target.jti, clientId, userId: accountId } : { clientId, userIds: await tokenHolders(tx, accountId) },
        k.clock.now(),
      );
    },
    (count) => `active tokens: ${count} -> 0`,
  );
}

/**
 * Revokes one refresh-token grant (a family: every rotation of one login's refresh token), or
 * every grant of a client or an account, with every access token issued from them. Audited as
 * `refresh_token.revoked` under the grant's client and account. Returns how many grants that could
 * still be used were revoked.
 */
export async function revokeRefreshGrants(
  k: AuditedStore,
  admin: Admin,
  target: { familyId?: string; clientId?: string; accountId?: string },
) {
  const family = target.familyId ? await k.store.tokens.findFamily(target.familyId) : undefined;
  const clientId = target.clientId ? normalizeClientId(target.clientId) : family?.clientId;
  const accountId = target.accountId ? normalizeAccountId(target.accountId) : family?.accountId;
  return change(
    k,
    admin,
    "refresh_token.revoked",
    { clientId, accountId, detail: target.familyId },
    async (tx) => {
      if (!target.familyId && !clientId && !accountId)
        throw new registry.RegistryError("target", "name a refresh grant, a client or an account");
      if (target.familyId && !family) throw new registry.RegistryError("familyId", "no refresh grant has this id");
      await requireScopeForAccount(tx, admin, accountId);
      return tx.store.tokens.revokeRefreshFamilies({ familyId: target.familyId, clientId, accountId }, k.clock.now());
    },
    (revoked) => `live refresh grants: ${revoked.families} -> 0; ${revoked.accessTokens} access tokens revoked with them`,
  ).then((revoked) => revoked.families);
}

/** Account ids are EIP-55 addresses; any case is accepted from admins. */
export function normalizeAccountId(accountId: string): string {
  return /^0x[0-9a-fA-F]{40}$/.test(accountId) ? registry.parseAddress(accountId, "accountId") : accountId;
}

export const grantAdmin = (k: AuditedStore, admin: Admin, accountId: string) =>
  change(
    k,
    admin,
    "admin.granted",
    { accountId: normalizeAccountId(accountId) },
    async (tx) => {
      requireScope(admin, ADMIN_SCOPE, "granting the admin role");
      const id = registry.parseAddress(accountId, "accountId");
      const existing = await tx.store.accounts.findAdminRole(id);
      await tx.store.accounts.grantAdminRole(id, admin.label);
      return existing !== undefined;
    },
    (had) => differences({ adminRole: had }, { adminRole: true }),
  );

export const revokeAdmin = (k: AuditedStore, admin: Admin, accountId: string) =>
  change(
    k,
    admin,
    "admin.revoked",
    { accountId: normalizeAccountId(accountId) },
    async (tx) => {
      requireScope(admin, ADMIN_SCOPE, "revoking the admin role");
      const id = normalizeAccountId(accountId);
      if (!(await tx.store.accounts.revokeAdminRole(id))) throw new registry.RegistryError("accountId", "this account has no admin role");
      // Its dashboard sessions end now, rather than stay dormant until a new grant.
      await revokeAdminSessions(tx, id);
    },
    () => differences({ adminRole: true }, { adminRole: false }),
  );

// Accounts and their login sessions.

/** The account a change acts on: it must exist, and an admin's needs keyfob:admin. */
async function existingAccount(k: Pick<Keyfob, "store" | "config">, admin: Admin, accountId: string): Promise<string> {
  const id = normalizeAccountId(accountId.trim());
  if (!(await k.store.accounts.find(id))) throw new registry.RegistryError("accountId", `no account with id ${id}`);
  await requireScopeForAccount(k, admin, id);
  return id;
}

/**
 * Blocks an account (lib/accounts/blocking.ts): no login anywhere from now on, and its sessions,
 * unredeemed codes, access tokens (its wallets' too) and refresh tokens are revoked at once, in one
 * transaction, so every instance refuses them at the next request.
 */
export const blockAccount = (k: AuditedStore, admin: Admin, accountId: string) =>
  change(
    k,
    admin,
    "account.blocked",
    { accountId: normalizeAccountId(accountId) },
    async (tx) => {
      const id = await existingAccount(tx, admin, accountId);
      const before = (await tx.store.accounts.find(id))!;
      return { wasBlocked: before.blockedAt !== null, ...(await blocking.blockAccount(tx, id)) };
    },
    (r) =>
      `${differences({ blocked: r.wasBlocked }, { blocked: true })}; ${r.revokedTokens} access tokens and ${r.revokedSessions} sessions revoked, refresh tokens and codes with them`,
  );

export const unblockAccount = (k: AuditedStore, admin: Admin, accountId: string) =>
  change(
    k,
    admin,
    "account.unblocked",
    { accountId: normalizeAccountId(accountId) },
    async (tx) => {
      const id = await existingAccount(tx, admin, accountId);
      const before = (await tx.store.accounts.find(id))!;
      await blocking.unblockAccount(tx, id);
      return before.blockedAt !== null;
    },
    (was) => differences({ blocked: was }, { blocked: false }),
  );

/** Deletes an account with its identities and sessions, revoking what it holds (lib/accounts/directory.ts). */
export const deleteAccount = (k: AuditedStore, admin: Admin, accountId: string) =>
  change(
    k,
    admin,
    "account.deleted",
    { accountId: normalizeAccountId(accountId) },
    async (tx) => {
      const id = await existingAccount(tx, admin, accountId);
      const account = await tx.store.accounts.view(id);
      const deleted = await directory.deleteAccount(tx, id);
      if (!deleted) throw new registry.RegistryError("accountId", `no account with id ${id}`);
      return { ...deleted, identities: account?.identities.map((i) => `${i.provider}:${i.email ?? i.subject}`) ?? [] };
    },
    (r) =>
      `deleted: ${JSON.stringify({ identities: r.identities })}; ${r.revokedTokens} access tokens revoked, ${r.endedSessions} sessions ended`,
  );

/** Revokes one login session of an account (by its id), or all of them: they end at their next request, on every instance. */
export const revokeSessions = (k: AuditedStore, admin: Admin, accountId: string, sessionId?: string) =>
  change(
    k,
    admin,
    "session.revoked",
    { accountId: normalizeAccountId(accountId), detail: sessionId },
    async (tx) => {
      const id = await existingAccount(tx, admin, accountId);
      const count = await endSessions(tx, id, sessionId);
      if (sessionId && count === 0) throw new registry.RegistryError("sessionId", "no live session of this account has this id");
      return count;
    },
    (count) => `live sessions: ${count} fewer`,
  );

// Reads.

export async function listClients(
  k: Pick<Keyfob, "store">,
  _admin: Admin,
  query: { search?: string; page?: number } = {},
): Promise<Page<ClientSummaryRow>> {
  const page = Math.max(1, Math.floor(query.page ?? 1));
  const search = query.search?.trim() || undefined;
  const [items, total] = await Promise.all([
    k.store.clients.summaryPage(search, (page - 1) * PAGE_SIZE, PAGE_SIZE),
    k.store.clients.count(search),
  ]);
  return { items, total, page, pageSize: PAGE_SIZE };
}

/** A client as the dashboard and the management API show it: its settings and lists, whether it has a secret, never the secret's hash. */
export type AdminClient = Omit<ClientDetailRow, "secretHash" | "previousSecretHash" | "previousSecretExpiresAt"> & {
  confidential: boolean;
  /** When the secret a rotation replaced stops working, while it still works; null: no overlap under way. */
  secretOverlapEndsAt: Date | null;
};

export async function getClient(k: Pick<Keyfob, "clock" | "store">, _admin: Admin, clientId: string): Promise<AdminClient | undefined> {
  const client = await k.store.clients.detail(normalizeClientId(clientId));
  if (!client) return undefined;
  const { secretHash, previousSecretHash, previousSecretExpiresAt, ...rest } = client;
  // When the secret a rotation replaced stops working, while it still works (never its hash).
  const secretOverlapEndsAt =
    previousSecretHash && previousSecretExpiresAt && previousSecretExpiresAt > k.clock.now() ? previousSecretExpiresAt : null;
  return { ...rest, confidential: secretHash !== null, secretOverlapEndsAt };
}

/** Accounts found by address, email or id (lib/accounts/directory.ts), 20 to a page. */
export async function listAccounts(
  k: Pick<Keyfob, "store">,
  _admin: Admin,
  query: { search?: string; page?: number } = {},
): Promise<Page<AccountView>> {
  const page = Math.max(1, Math.floor(query.page ?? 1));
  const { items, total } = await directory.searchAccounts(k.store, query.search, page, PAGE_SIZE);
  return { items, total, page, pageSize: PAGE_SIZE };
}

/** The account an admin names by id, wallet address or email; undefined when none (or several) match. */
export async function resolveAccountReference(k: Pick<Keyfob, "store">, _admin: Admin, reference: string) {
  return directory.findAccount(k.store, reference);
}

/**
 * One account for the dashboard: identities (wallets, Google, Apple, passkeys), live login
 * sessions, what it holds (active tokens, refresh grants), and whether it is an admin.
 */
export type AdminAccount = AccountView & {
  /** Its own wallet (its id) and the wallets linked to it. */
  wallets: { address: string; own: boolean; linkedAt: Date }[];
  sessions: (Omit<LiveSessionRow, "idHash"> & { id: string })[];
  holdings: directory.AccountHoldings;
  /** The role granted in the dashboard, if any. */
  adminRole: Pick<AdminRoleRow, "grantedBy" | "grantedAt"> | null;
  /** An admin by the configuration (ADMIN_ADDRESSES). */
  configuredAdmin: boolean;
};

export async function getAccount(
  k: Pick<Keyfob, "config" | "clock" | "store">,
  _admin: Admin,
  accountId: string,
): Promise<AdminAccount | undefined> {
  const id = normalizeAccountId(accountId);
  const account = await k.store.accounts.view(id);
  if (!account) return undefined;
  const [sessions, holdings, role] = await Promise.all([
    liveSessions(k, id),
    directory.accountHoldings(k.store, id, k.clock.now()),
    k.store.accounts.findAdminRole(id),
  ]);
  return {
    ...account,
    wallets: account.identities
      .filter((i) => i.provider === "web3")
      .map((i) => ({ address: i.subject, own: i.subject === id, linkedAt: i.createdAt })),
    sessions: sessions.map(({ idHash, ...session }) => ({ id: idHash, ...session })),
    holdings,
    adminRole: role ? { grantedBy: role.grantedBy, grantedAt: role.grantedAt } : null,
    configuredAdmin: k.config.adminAddresses.includes(id.toLowerCase()),
  };
}

/** The accounts granted the admin role in the dashboard (the configured ones are in k.config). */
export function listAdmins(k: Pick<Keyfob, "store">, _admin: Admin): Promise<AdminRoleRow[]> {
  return k.store.accounts.adminRoles();
}

export function keySchedule(k: Pick<Keyfob, "keys">, _admin: Admin): Promise<KeyScheduleEntry[]> {
  return k.keys.schedule();
}

/** Signing keys out of use for good, newest first (the latest 100): revoked ones, and retired ones no longer published. */
export function keyHistory(k: Pick<Keyfob, "store">, _admin: Admin): Promise<KeyHistoryRow[]> {
  return k.store.keys.history(100);
}

/** Active (unexpired, unrevoked) tokens of a client or an account (its linked wallets' Flow A tokens too), newest first. */
export async function listActiveTokens(
  k: Pick<Keyfob, "clock" | "store">,
  _admin: Admin,
  query: { clientId?: string; accountId?: string; page?: number },
): Promise<Page<IssuedTokenRow>> {
  const page = Math.max(1, Math.floor(query.page ?? 1));
  const selector = {
    clientId: query.clientId ? normalizeClientId(query.clientId) : undefined,
    userIds: await tokenHolders(k, query.accountId ? normalizeAccountId(query.accountId) : undefined),
  };
  const now = k.clock.now();
  const [items, total] = await Promise.all([
    k.store.tokens.activePage(selector, (page - 1) * PAGE_SIZE, PAGE_SIZE, now),
    k.store.tokens.countActive(selector, now),
  ]);
  return { items, total, page, pageSize: PAGE_SIZE };
}

/** A live refresh grant: its usable token, when the grant began, when it was last used (its latest rotation; null if never) and how often. */
export type LiveRefreshGrant = Omit<LiveGrantRow, "issuedAt"> & { grantedAt: Date; lastUsedAt: Date | null; rotations: number };

/**
 * Live refresh-token grants of a client or an account, newest rotation first: one row per family
 * (its usable token), with when the grant began, when it was last used (its latest rotation; null
 * if never), how often, and when it ends unused (idle) and at the latest (the family's end).
 */
export async function listRefreshGrants(
  k: Pick<Keyfob, "clock" | "store">,
  _admin: Admin,
  query: { clientId?: string; accountId?: string; page?: number },
): Promise<Page<LiveRefreshGrant>> {
  const page = Math.max(1, Math.floor(query.page ?? 1));
  const now = k.clock.now();
  const selector = {
    clientId: query.clientId ? normalizeClientId(query.clientId) : undefined,
    accountId: query.accountId ? normalizeAccountId(query.accountId) : undefined,
  };
  const [live, total] = await Promise.all([
    k.store.tokens.liveGrantPage(selector, (page - 1) * PAGE_SIZE, PAGE_SIZE, now),
    k.store.tokens.countLiveGrants(selector, now),
  ]);
  const families = live.length ? await k.store.tokens.familyHistories(live.map((t) => t.familyId)) : [];
  const byFamily = new Map(families.map((f) => [f.familyId, f]));
  const items = live.map(({ issuedAt, ...token }) => {
    const family = byFamily.get(token.familyId);
    const rotations = (family?.tokens ?? 1) - 1;
    return { ...token, grantedAt: family?.grantedAt ?? issuedAt, lastUsedAt: rotations > 0 ? issuedAt : null, rotations };
  });
  return { items, total, page, pageSize: PAGE_SIZE };
}

export type { AuditFilter };

/** Events newest first by when they happened: a queued event (lib/audit.ts) may be written after later ones. */
export async function auditEvents(k: Pick<Keyfob, "store">, _admin: Admin, filter: AuditFilter & { page?: number }) {
  const page = Math.max(1, Math.floor(filter.page ?? 1));
  const [items, total] = await Promise.all([k.store.audit.page(filter, (page - 1) * PAGE_SIZE, PAGE_SIZE), k.store.audit.count(filter)]);
  return { items: items.map((e) => ({ ...e, id: e.id.toString() })), total, page, pageSize: PAGE_SIZE };
}

const CSV_COLUMNS = ["at", "actor", "action", "clientId", "accountId", "ip", "outcome", "detail"] as const;

/** The filtered audit log as CSV (RFC 4180), newest first, at most 100 000 rows; times in UTC (ISO 8601, `Z`). */
export async function auditCsv(k: Pick<Keyfob, "store">, _admin: Admin, filter: AuditFilter): Promise<string> {
  const rows = await k.store.audit.page(filter, 0, 100_000);
  const cell = (value: unknown) => {
    const text = value instanceof Date ? value.toISOString() : value == null ? "" : String(value);
    // Quote always; neutralise what a spreadsheet would run: a formula character first, or after
    // leading whitespace, and a leading tab or carriage return (OWASP CSV injection).
    return `"${(/^(?:[=+\-@\t\r]|\s+[=+\-@])/.test(text) ? `'${text}` : text).replace(/"/g, '""')}"`;
  };
  return `${[CSV_COLUMNS.join(","), ...rows.map((row) => CSV_COLUMNS.map((c) => cell(row[c])).join(","))].join("\r\n")}\r\n`;
}

/** Counts for the overview, and token issuances and failures per UTC day for the last `days` days. */
export async function overview(k: Pick<Keyfob, "clock" | "store">, _admin: Admin, days = 14) {
  const now = k.clock.now().getTime();
  const since = new Date(now - days * 86400_000);
  const [clients, accounts, activeTokens, perDay] = await Promise.all([
    k.store.clients.count(),
    k.store.accounts.count(),
    k.store.tokens.countActive({}, new Date(now)),
    k.store.audit.tokenEventsPerDay(since),
  ]);
  const series = new Map<string, { day: string; issued: number; failed: number }>();
  for (let i = days - 1; i >= 0; i--) {
    const day = new Date(now - i * 86400_000).toISOString().slice(0, 10);
    series.set(day, { day, issued: 0, failed: 0 });
  }
  for (const row of perDay) {
    const point = series.get(row.day.toISOString().slice(0, 10));
    if (point) point[row.action === "token.issued" ? "issued" : "failed"] = Number(row.count);
  }
  return { clients, accounts, activeTokens, perDay: [...series.values()] };
}
