import type { Keyfob } from "../keyfob";
import { OAuthError } from "../oauth/errors";

/**
 * Blocking an account: it cannot log in (hosted page, Flow A for its wallets, a code issued before),
 * and what it holds stops working at once on every instance: its sessions, unredeemed codes, access
 * tokens and refresh tokens are revoked in the same transaction. Unblocking lets it log in again;
 * nothing revoked comes back.
 */
export async function blockAccount({ db }: Keyfob, accountId: string, now = new Date()): Promise<{ revokedTokens: number; revokedSessions: number }> {
  return db.$transaction(async (tx) => {
    const account = await tx.account.update({ where: { id: accountId }, data: { blockedAt: now }, include: { identities: { where: { provider: "web3" } } } });
    // Flow A tokens name the wallet, not the account it is linked to.
    const holders = [account.id, ...account.identities.map((i) => i.subject)];
    const sessions = await tx.loginSession.updateMany({ where: { accountId, revokedAt: null }, data: { revokedAt: now } });
    await tx.authorizationCode.updateMany({ where: { accountId, usedAt: null }, data: { expiresAt: now } });
    const tokens = await tx.issuedToken.updateMany({ where: { userId: { in: holders }, revokedAt: null }, data: { revokedAt: now } });
    await tx.refreshToken.updateMany({ where: { accountId, revokedAt: null }, data: { revokedAt: now } });
    return { revokedTokens: tokens.count, revokedSessions: sessions.count };
  });
}

export async function unblockAccount({ db }: Keyfob, accountId: string): Promise<void> {
  await db.account.update({ where: { id: accountId }, data: { blockedAt: null } });
}

export const accountBlocked = () => new OAuthError("access_denied", "this account is blocked");
