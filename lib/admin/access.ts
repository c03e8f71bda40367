import type { Keyfob } from "../keyfob";
import { ADMIN_SCOPE, covers, type ManagementScope } from "./scopes";
import { readAdminSession } from "./session";

/**
 * Who performs an admin change: a signed-in admin's account, the operator's command line (both hold
 * every scope), or a management API client, which holds only its token's scopes.
 */
export type Admin = { accountId: string; label: string; scopes: readonly ManagementScope[] };

/** What the dashboard's admins and the command line's operator hold: everything. */
export const ALL_SCOPES: readonly ManagementScope[] = [ADMIN_SCOPE];

/** Thrown by admin operations for a caller who is not (or no longer) an admin. */
export class AdminAccessError extends Error {
  override name = "AdminAccessError";
  constructor(readonly reason: "signed-out" | "forbidden") {
    super(reason === "signed-out" ? "sign in to use the dashboard" : "this account is not an admin");
  }
}

/** An admin: on the configured allowlist (address, or a verified email of one of its identities), or granted the role. */
export async function isAdmin({ store, config }: Pick<Keyfob, "store" | "config">, accountId: string): Promise<boolean> {
  if (config.adminAddresses.includes(accountId.toLowerCase())) return true;
  if (await store.accounts.findAdminRole(accountId)) return true;
  if (config.adminEmails.length === 0) return false;
  const emails = await store.accounts.verifiedEmails(accountId);
  return emails.some((email) => config.adminEmails.includes(email.toLowerCase()));
}

/**
 * The admin behind a dashboard session's token; checked on every read and every change, so an
 * ended session (lib/admin/session.ts), a blocked account or a revoked role takes effect at once.
 * Throws AdminAccessError("signed-out" | "forbidden").
 */
export async function requireAdmin(keyfob: Pick<Keyfob, "config" | "clock" | "store">, sessionToken: string | undefined): Promise<Admin> {
  const accountId = (await readAdminSession(keyfob, sessionToken))?.accountId;
  if (!accountId) throw new AdminAccessError("signed-out");
  if (!(await isAdmin(keyfob, accountId))) throw new AdminAccessError("forbidden");
  return { accountId, label: (await keyfob.store.accounts.anyEmail(accountId)) ?? accountId, scopes: ALL_SCOPES };
}

/**
 * Refused because the caller lacks a scope the change needs (a management API client limited to
 * narrower scopes): 403, audited as `forbidden`.
 */
export class InsufficientScope extends Error {
  override name = "InsufficientScope";
  constructor(
    readonly scope: ManagementScope,
    why: string,
  ) {
    super(`${why} needs the ${scope} scope`);
  }
}

/** Refuses (InsufficientScope) a caller without `scope`, naming `why` it is needed. */
export function requireScope(admin: Admin, scope: ManagementScope, why: string): void {
  if (!covers(admin.scopes, scope)) throw new InsufficientScope(scope, why);
}
