import { randomBytes } from "node:crypto";
import { bytesToHex, getAddress } from "viem";
import { Prisma } from "../db/client";
import type { Keyfob } from "../keyfob";
import { invalidRequest } from "../oauth/errors";
import { accountBlocked } from "./blocking";

export type Connector = "web3" | "google" | "apple" | "passkey";

/**
 * Who logged in: a wallet address, a Google/Apple subject with its email, or a passkey: the
 * WebAuthn user handle its account's passkeys share (lib/passkeys), with no email.
 */
export type LoginIdentity = { provider: Connector; subject: string; email?: string; emailVerified: boolean };

/**
 * The account an identity logs into. A known identity keeps its account (a wallet linked to a
 * Google account logs into that account). A new wallet becomes an account of its own address; a new
 * Google, Apple or passkey identity gets an account with a random address: an identifier in the
 * platform's format, with no key behind it (nothing would use one, and a stored key is a liability).
 */
export async function resolveAccount({ db }: Keyfob, identity: LoginIdentity): Promise<string> {
  const where = { provider_subject: { provider: identity.provider, subject: identity.subject } };
  const known = await db.identity.findUnique({ where, select: { accountId: true } });
  if (known) {
    await db.identity.update({
      where,
      data: { lastLoginAt: new Date(), ...(identity.email !== undefined && { email: identity.email, emailVerified: identity.emailVerified }) },
    });
    return known.accountId;
  }
  const accountId = identity.provider === "web3" ? getAddress(identity.subject) : getAddress(bytesToHex(randomBytes(20)));
  try {
    await db.$transaction([
      db.account.upsert({ where: { id: accountId }, create: { id: accountId }, update: {} }),
      db.identity.create({
        data: { provider: identity.provider, subject: identity.subject, accountId, email: identity.email, emailVerified: identity.emailVerified },
      }),
    ]);
    return accountId;
  } catch (error) {
    // The same identity's first login, twice at once: the other request created it.
    if (error instanceof Prisma.PrismaClientKnownRequestError && error.code === "P2002") {
      return (await db.identity.findUniqueOrThrow({ where, select: { accountId: true } })).accountId;
    }
    throw error;
  }
}

/** Links a wallet (whose signature the caller has verified) to an unblocked account, so it can log into it. */
export async function linkWallet({ db }: Keyfob, accountId: string, wallet: string): Promise<void> {
  if ((await db.account.findUnique({ where: { id: accountId }, select: { blockedAt: true } }))?.blockedAt) throw accountBlocked();
  const subject = getAddress(wallet);
  const linked = await db.identity.findUnique({ where: { provider_subject: { provider: "web3", subject } } });
  if (linked?.accountId === accountId) return;
  if (linked || (await db.account.findUnique({ where: { id: subject }, select: { id: true } }))) {
    throw invalidRequest("this wallet already belongs to an account");
  }
  await db.identity.create({ data: { provider: "web3", subject, accountId } });
}
