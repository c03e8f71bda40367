import type { Keyfob } from "../keyfob";
import { readAdminSession } from "./session";

/** Who performs an admin change: a signed-in admin's account, or the operator's command line. */
export type Admin = { accountId: string; label: string };

/** Thrown by admin operations for a caller who is not (or no longer) an admin. */
export class AdminAccessError extends Error {
  override name = "AdminAccessError";
  constructor(readonly reason: "signed-out" | "forbidden") {
    super(reason === "signed-out" ? "sign in to use the dashboard" : "this account is not an admin");
  }
}

/** An admin: on the configured allowlist (address, or a verified email of one of its identities), or granted the role. */
export async function isAdmin({ db, config }: Keyfob, accountId: string): Promise<boolean> {
  if (config.adminAddresses.includes(accountId.toLowerCase())) return true;
  if (await db.adminRole.findUnique({ where: { accountId }, select: { accountId: true } })) return true;
  if (config.adminEmails.length === 0) return false;
  const identities = await db.identity.findMany({ where: { accountId, emailVerified: true, email: { not: null } }, select: { email: true } });
  return identities.some((identity) => config.adminEmails.includes(identity.email!.toLowerCase()));
}

/**
 * The admin behind a dashboard session's token; checked on every read and every change, so an
 * ended session (lib/admin/session.ts), a blocked account or a revoked role takes effect at once.
 * Throws AdminAccessError("signed-out" | "forbidden").
 */
export async function requireAdmin(keyfob: Keyfob, sessionToken: string | undefined): Promise<Admin> {
  const accountId = (await readAdminSession(keyfob, sessionToken))?.accountId;
  if (!accountId) throw new AdminAccessError("signed-out");
  if (!(await isAdmin(keyfob, accountId))) throw new AdminAccessError("forbidden");
  const identity = await keyfob.db.identity.findFirst({ where: { accountId, email: { not: null } }, select: { email: true } });
  return { accountId, label: identity?.email ?? accountId };
}
