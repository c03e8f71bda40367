import { resolveAccount, type LoginIdentity } from "../accounts/accounts";
import { accountBlocked } from "../accounts/blocking";
import type { Keyfob } from "../keyfob";
import { startSession, type LoginSession } from "./login-session";

/** A fresh login: who (for a wallet, whether its contract vouched for the signature) and from where. */
export type FreshLogin = { identity: LoginIdentity; contractSignature?: boolean; ip?: string; userAgent?: string };

/**
 * Logs an identity in: its account (made on a first login), refused if blocked, and a new login
 * session. Audited either way, under the client it is for (none at /account).
 */
export async function logIn(
  keyfob: Pick<Keyfob, "config" | "clock" | "store" | "audit">,
  login: FreshLogin,
  clientId?: string,
  now = keyfob.clock.now(),
): Promise<{ accountId: string; token: string; expiresAt: Date; session: LoginSession }> {
  const accountId = await resolveAccount(keyfob, login.identity);
  if ((await keyfob.store.accounts.find(accountId))?.blockedAt) {
    keyfob.audit.record({
      action: "login.failed",
      outcome: "access_denied",
      clientId,
      accountId,
      ip: login.ip,
      detail: "the account is blocked",
    });
    throw accountBlocked();
  }
  const started = await startSession(keyfob, { accountId, ...login }, now);
  keyfob.audit.record({
    action: "login.succeeded",
    outcome: "success",
    clientId,
    accountId,
    ip: login.ip,
    detail: login.identity.provider,
  });
  return { accountId, ...started };
}
