import type { Keyfob } from "../keyfob";
import { invalidRequest } from "../oauth/errors";
import { CONTRACT_SIGNATURE, RECENT_LOGIN_MS, type LoginSession } from "../sessions/login-session";

/**
 * The changes at /account that need more than a live login session: linking a wallet, adding a
 * passkey, unlinking a way in, removing a passkey, deleting the account. A wallet login whose
 * signature only the chain RPC vouched for (amr "contract") makes none of them: a lying RPC would
 * otherwise attach the attacker's own key to any account it claims, or take the owner's ways in
 * away. And each needs a login of the last RECENT_LOGIN_MS, as the dashboard does, not a session
 * up to SESSION_MAX_AGE old on a shared or stolen browser. Adding counts too: a way in added from
 * an old session would sign in anew at once, and then pass the rule for the rest. Every refusal is
 * audited, under the action it refused.
 */

/** What the requesting session proves of its login: how (amr) and when (auth_time). */
export type SessionLogin = Pick<LoginSession, "amr" | "authTime">;

/** Who asks for a sensitive change: their session's login, and where from (for the audit log). */
export type SignedInRequester = { login: SessionLogin; ip?: string };

/** The sensitive changes, by the audit action each is recorded under. */
export type SensitiveChange =
  | "account.wallet_linked"
  | "account.passkey_added"
  | "account.identity_unlinked"
  | "account.passkey_removed"
  | "account.deleted";

/** Whether the session's wallet signature was vouched for by the chain RPC rather than recovered. */
export const isContractLogin = (login: Pick<SessionLogin, "amr">) => login.amr.includes(CONTRACT_SIGNATURE);

/** Refuses `change` (contract_session, login_not_recent) unless the requester's login may make it, audited. */
export function requireStrongLogin(
  k: Pick<Keyfob, "clock" | "audit">,
  accountId: string,
  change: SensitiveChange,
  { login, ip }: SignedInRequester,
  now = k.clock.now(),
): void {
  const age = now.getTime() - login.authTime.getTime();
  const code = isContractLogin(login) ? "contract_session" : age > RECENT_LOGIN_MS ? "login_not_recent" : undefined;
  if (!code) return;
  k.audit.record({
    action: change,
    outcome: code,
    accountId,
    ip,
    detail: `refused at /account: login ${Math.floor(age / 60_000)} minutes ago, amr ${login.amr.join(" ")}`,
  });
  throw invalidRequest({ code });
}
