import type { Keyfob } from "../keyfob";
import { OAuthError } from "../oauth/errors";

/**
 * Blocking an account: it cannot log in (hosted page, Flow A for its wallets, a code issued before),
 * and what it holds stops working at once on every instance: its sessions, unredeemed codes, access
 * tokens and refresh tokens are revoked in the same transaction. Unblocking lets it log in again;
 * nothing revoked comes back.
 */
export function blockAccount(
  { store, clock }: Pick<Keyfob, "store" | "clock">,
  accountId: string,
  now = clock.now(),
): Promise<{ revokedTokens: number; revokedSessions: number }> {
  return store.accounts.block(accountId, now);
}

export function unblockAccount({ store }: Pick<Keyfob, "store">, accountId: string): Promise<void> {
  return store.accounts.unblock(accountId);
}

export const accountBlocked = () => new OAuthError("access_denied", "this account is blocked");
