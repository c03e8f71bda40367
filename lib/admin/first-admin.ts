/**
 * The first admin, without knowing a wallet address in advance: while Keyfob has no admin at all
 * (none configured in ADMIN_ADDRESSES or ADMIN_EMAILS, no role granted), each start prints a
 * one-time set-up link, `<issuer>/admin/setup?code=…`, on the operator's own terminal. Whoever
 * holds it signs in with the dashboard's usual sign-in and becomes the first admin. The code is
 * random, stored hashed in PostgreSQL (so any instance accepts it), lasts an hour and works once;
 * every code is refused once any admin exists. The claim is audited as `admin.granted` by
 * `setup link`. More admins are granted from the dashboard or `keyfob admins grant`.
 */
import { ALL_SCOPES, type Admin } from "./access";
import { RegistryError } from "../clients/registry";
import type { Keyfob } from "../keyfob";
import { isOpaque, opaqueDigest, randomOpaque } from "../oauth/opaque";
import { change, type AuditedStore } from "./operations/audited";

export const SETUP_CODE_SECONDS = 3600;

/** Why a set-up code is refused. */
export type SetupRefusal = "admin-exists" | "unknown" | "used" | "expired";

export const SETUP_REFUSALS: Record<SetupRefusal, string> = {
  "admin-exists":
    "Set-up is closed: Keyfob already has an admin. Sign in to the dashboard, or ask an admin to grant your account the role.",
  unknown: "This set-up link is not valid. Copy the whole link Keyfob printed when it started.",
  used: "This set-up link has already been used: each one works once.",
  expired: "This set-up link has expired (each lasts an hour). Restart Keyfob for a new one.",
};

/** Refused set-up: audited as `rejected`, with the reason. */
export class SetupRefused extends RegistryError {
  constructor(readonly reason: SetupRefusal) {
    super("code", SETUP_REFUSALS[reason]);
  }
}

/** Whether any admin exists: configured (addresses, emails) or granted the role. */
export async function adminExists({ config, store }: Pick<Keyfob, "config" | "store">): Promise<boolean> {
  if (config.adminAddresses.length > 0 || config.adminEmails.length > 0) return true;
  return (await store.accounts.adminRoles()).length > 0;
}

/** A new set-up link while there is no admin (undefined otherwise); its code is stored hashed only. */
export async function issueSetupLink(k: Pick<Keyfob, "config" | "clock" | "store">): Promise<string | undefined> {
  if (await adminExists(k)) return undefined;
  const code = randomOpaque();
  const now = k.clock.now();
  await k.store.accounts.createAdminSetupCode(
    { codeHash: opaqueDigest(code), expiresAt: new Date(now.getTime() + SETUP_CODE_SECONDS * 1000) },
    now,
  );
  return `${k.config.issuerUrl}/admin/setup?code=${code}`;
}

/**
 * Prints the set-up link at start-up when there is no admin. The one secret Keyfob prints: on the
 * operator's own terminal (stderr, with the other words for people; stdout is the JSON log),
 * once per start.
 */
export async function printFirstAdminLink(
  k: Pick<Keyfob, "config" | "clock" | "store">,
  print: (line: string) => void = console.error,
): Promise<void> {
  const link = await issueSetupLink(k);
  if (!link) return;
  print(
    [
      "",
      "No admin yet. Open this one-time link within the hour and sign in with your wallet to become the first admin:",
      `  ${link}`,
      "(Or: npm run keyfob -- admins grant <your wallet address>.)",
      "",
    ].join("\n"),
  );
}

/** Why a code would be refused now, or "ok"; changes nothing. */
export async function checkSetupCode(
  k: Pick<Keyfob, "config" | "clock" | "store">,
  code: string | undefined,
): Promise<SetupRefusal | "ok"> {
  if (await adminExists(k)) return "admin-exists";
  if (!isOpaque(code)) return "unknown";
  return refusal(await k.store.accounts.findAdminSetupCode(opaqueDigest(code)), k.clock.now()) ?? "ok";
}

const refusal = (code: { usedAt: Date | null; expiresAt: Date } | undefined, now: Date): SetupRefusal | undefined =>
  !code ? "unknown" : code.usedAt ? "used" : code.expiresAt <= now ? "expired" : undefined;

/**
 * Makes `accountId` the first admin with a set-up code: once, before it expires, and only while
 * there is no admin (checked under a lock, so two claims at once cannot both win). Audited as
 * `admin.granted` by `setup link`; a refusal as `rejected` with its reason. Throws SetupRefused.
 */
export async function claimFirstAdmin(k: AuditedStore, code: string | undefined, accountId: string): Promise<void> {
  const setupLink: Admin = { accountId, label: "setup link", scopes: ALL_SCOPES };
  await change(k, setupLink, "admin.granted", { accountId, detail: "first admin, by the set-up link" }, async (tx) => {
    if (await adminExists(tx)) throw new SetupRefused("admin-exists");
    if (!isOpaque(code)) throw new SetupRefused("unknown");
    const now = tx.clock.now();
    const claimed = await tx.store.accounts.claimAdminSetupCode(opaqueDigest(code), accountId, now);
    if (claimed === "admin-exists") throw new SetupRefused("admin-exists");
    const refused = refusal(claimed, now);
    if (refused) throw new SetupRefused(refused);
  });
}
