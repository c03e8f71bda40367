import * as blocking from "../../accounts/blocking";
import * as directory from "../../accounts/directory";
import { revokeConsent } from "../../consent/grants";
import * as registry from "../../clients/registry";
import type { Keyfob } from "../../keyfob";
import { revokeSessions as endSessions } from "../../sessions/login-session";
import { isAdmin, requireScope, type Admin } from "../access";
import { ADMIN_SCOPE } from "../scopes";
import { revokeAdminSessions } from "../session";
import { change, differences, type AuditedStore } from "./audited";

/** Admin operations on accounts: the admin role, blocking, deleting, ending login sessions, revoking consent grants. */
/** Acting on an admin's account (blocking, deleting, revoking what it holds) needs keyfob:admin. */
export async function requireScopeForAccount(k: Pick<Keyfob, "store" | "config">, admin: Admin, accountId: string | undefined) {
  if (accountId && (await isAdmin(k, accountId))) requireScope(admin, ADMIN_SCOPE, "acting on an admin's account");
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
      if (!(await tx.store.accounts.revokeAdminRole(id)))
        throw tx.config.adminAddresses.includes(id.toLowerCase())
          ? new registry.RegistryError("accountId", "this admin is configured in ADMIN_ADDRESSES: remove it there and restart", "conflict")
          : new registry.RegistryError("accountId", "this account has no admin role", "not_found");
      // Its dashboard sessions end now, rather than stay dormant until a new grant.
      await revokeAdminSessions(tx, id);
    },
    () => differences({ adminRole: true }, { adminRole: false }),
  );

// Accounts and their login sessions.

/** The account a change acts on: it must exist, and an admin's needs keyfob:admin. */
async function existingAccount(k: Pick<Keyfob, "store" | "config">, admin: Admin, accountId: string): Promise<string> {
  const id = normalizeAccountId(accountId.trim());
  if (!(await k.store.accounts.find(id))) throw new registry.RegistryError("accountId", `no account with id ${id}`, "not_found");
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
      if (!deleted) throw new registry.RegistryError("accountId", `no account with id ${id}`, "not_found");
      return { ...deleted, identities: account?.identities.map((i) => `${i.provider}:${i.email ?? i.subject}`) ?? [] };
    },
    (r) =>
      `deleted: ${JSON.stringify({ identities: r.identities })}; ${r.revokedTokens} access tokens revoked, ${r.endedSessions} sessions ended`,
  );

/**
 * Revokes an account's consent grant to a third-party client, with the client's refresh tokens for
 * the account (lib/consent/grants.ts), as the account itself can at /account.
 */
export const revokeConsentGrant = (k: AuditedStore, admin: Admin, accountId: string, clientId: string) =>
  change(
    k,
    admin,
    "consent.revoked",
    { accountId: normalizeAccountId(accountId), clientId },
    async (tx) => {
      const id = await existingAccount(tx, admin, accountId);
      const revoked = await revokeConsent(tx, id, clientId);
      if (!revoked) throw new registry.RegistryError("clientId", "this account has not granted this client consent", "not_found");
      return revoked;
    },
    (revoked) => `${revoked.families} refresh grant(s) ended`,
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
      if (sessionId && count === 0)
        throw new registry.RegistryError("sessionId", "no live session of this account has this id", "not_found");
      return count;
    },
    (count) => `live sessions: ${count} fewer`,
  );
