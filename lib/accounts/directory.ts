import { getAddress } from "viem";
import { Prisma, type Database } from "../db/client";
import type { Keyfob } from "../keyfob";

/**
 * Accounts as admins see them: found by address, email or id, with their identities (wallets,
 * Google, Apple, passkeys), and deleted with everything they hold. (Blocking: ./blocking.ts.)
 */

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;

/** What an account is made of, as listed and shown to admins. */
const ACCOUNT_VIEW = {
  id: true,
  createdAt: true,
  blockedAt: true,
  identities: {
    orderBy: { createdAt: "asc" },
    select: { provider: true, subject: true, email: true, emailVerified: true, createdAt: true, lastLoginAt: true },
  },
} satisfies Prisma.AccountSelect;

/**
 * Accounts matching `query`, newest first: an address finds the account of that id and the
 * account a wallet of that address is linked to; an email (anything with `@`) the accounts of
 * identities with that email, in any case; any other text is looked for in ids, identity subjects
 * (wallet addresses, upstream subjects) and emails. No query lists every account.
 */
export async function searchAccounts(db: Database, query: string | undefined, page: number, pageSize: number) {
  const text = query?.trim() ?? "";
  let where: Prisma.AccountWhereInput = {};
  if (ADDRESS.test(text)) {
    const address = getAddress(text);
    where = { OR: [{ id: address }, { identities: { some: { provider: "web3", subject: address } } }] };
  } else if (text.includes("@")) {
    where = { identities: { some: { email: { equals: text, mode: "insensitive" } } } };
  } else if (text) {
    where = {
      OR: [
        { id: { contains: text, mode: "insensitive" } },
        { identities: { some: { subject: { contains: text, mode: "insensitive" } } } },
        { identities: { some: { email: { contains: text, mode: "insensitive" } } } },
      ],
    };
  }
  const [items, total] = await Promise.all([
    db.account.findMany({ where, orderBy: [{ createdAt: "desc" }, { id: "asc" }], skip: (page - 1) * pageSize, take: pageSize, select: ACCOUNT_VIEW }),
    db.account.count({ where }),
  ]);
  return { items, total };
}

/** The account an admin names by id, address of a linked wallet, or email (when exactly one account has it). */
export async function findAccount(db: Database, reference: string): Promise<{ id: string } | { ambiguous: string[] } | undefined> {
  const text = reference.trim();
  if (!text) return undefined;
  if (ADDRESS.test(text)) {
    const address = getAddress(text);
    const own = await db.account.findUnique({ where: { id: address }, select: { id: true } });
    if (own) return own;
    const linked = await db.identity.findUnique({ where: { provider_subject: { provider: "web3", subject: address } }, select: { accountId: true } });
    return linked ? { id: linked.accountId } : undefined;
  }
  const byEmail = await db.identity.findMany({ where: { email: { equals: text, mode: "insensitive" } }, select: { accountId: true }, distinct: ["accountId"], take: 10 });
  if (byEmail.length === 1) return { id: byEmail[0].accountId };
  if (byEmail.length > 1) return { ambiguous: byEmail.map((i) => i.accountId) };
  const byId = await db.account.findUnique({ where: { id: text }, select: { id: true } });
  return byId ?? undefined;
}

/** One account with its identities, or undefined. */
export function getAccount(db: Database, accountId: string) {
  return db.account.findUnique({ where: { id: accountId }, select: ACCOUNT_VIEW });
}

/**
 * Whose tokens are the account's: its own id, and its linked wallets (Flow A tokens name the
 * wallet that signed, not the account it is linked to).
 */
export async function accountHolders(db: Pick<Database, "identity">, accountId: string): Promise<string[]> {
  const wallets = await db.identity.findMany({ where: { accountId, provider: "web3" }, select: { subject: true } });
  return [...new Set([accountId, ...wallets.map((w) => w.subject)])];
}

/** Counts of what an account holds now: live access tokens (its wallets' too) and live refresh grants. */
export async function accountHoldings(db: Database, accountId: string, now = new Date()) {
  const holders = await accountHolders(db, accountId);
  const [accessTokens, refreshGrants] = await Promise.all([
    db.issuedToken.count({ where: { userId: { in: holders }, revokedAt: null, expiresAt: { gt: now } } }),
    db.refreshToken.count({ where: { accountId, usedAt: null, revokedAt: null, expiresAt: { gt: now }, familyExpiresAt: { gt: now } } }),
  ]);
  return { accessTokens, refreshGrants };
}

/**
 * Deletes an account: in one transaction its access tokens (its wallets' too), refresh tokens and
 * unredeemed codes are revoked, its admin role removed, and the account deleted with its
 * identities and login sessions (which end at their next request, on every instance). The audit
 * log keeps its events. A wallet or Google/Apple identity that logs in again later gets a new,
 * empty account: to keep someone out, block the account instead.
 */
export async function deleteAccount({ db }: Keyfob, accountId: string, now = new Date()): Promise<{ revokedTokens: number; endedSessions: number; identities: number } | undefined> {
  return db.$transaction(async (tx) => {
    const account = await tx.account.findUnique({ where: { id: accountId }, select: { id: true, _count: { select: { identities: true } } } });
    if (!account) return undefined;
    const holders = await accountHolders(tx, accountId);
    const sessions = await tx.loginSession.count({ where: { accountId, revokedAt: null, expiresAt: { gt: now } } });
    await tx.authorizationCode.updateMany({ where: { accountId, usedAt: null }, data: { expiresAt: now } });
    const tokens = await tx.issuedToken.updateMany({ where: { userId: { in: holders }, revokedAt: null }, data: { revokedAt: now } });
    await tx.refreshToken.updateMany({ where: { accountId, revokedAt: null }, data: { revokedAt: now } });
    await tx.adminRole.deleteMany({ where: { accountId } });
    await tx.account.delete({ where: { id: accountId } });
    return { revokedTokens: tokens.count, endedSessions: sessions, identities: account._count.identities };
  });
}
