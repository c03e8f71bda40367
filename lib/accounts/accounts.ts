import { randomBytes } from "node:crypto";
import { bytesToHex, getAddress } from "viem";
import type { Keyfob } from "../keyfob";
import { Duplicate } from "../store";
import { invalidRequest } from "../oauth/errors";
import { accountBlocked } from "./blocking";

export type Connector = "web3" | "google" | "apple" | "passkey";

/**
 * Who logged in: a wallet address, a Google/Apple subject with its email, or a passkey: the
 * WebAuthn user handle its account's passkeys share (lib/passkeys), with no email, and the
 * credential used (`passkeyId`), whose removal ends the session.
 */
export type LoginIdentity = { provider: Connector; subject: string; email?: string; emailVerified: boolean; passkeyId?: string };

/**
 * The account an identity logs into. A known identity keeps its account (a wallet linked to a
 * Google account logs into that account). A new wallet becomes an account of its own address; a new
 * Google, Apple or passkey identity gets an account with a random address: an identifier in the
 * platform's format, with no key behind it (nothing would use one, and a stored key is a liability).
 */
export async function resolveAccount({ store, clock }: Pick<Keyfob, "store" | "clock">, identity: LoginIdentity): Promise<string> {
  const key = { provider: identity.provider, subject: identity.subject };
  const known = await store.accounts.findIdentity(key);
  if (known) {
    await store.accounts.touchIdentity(
      key,
      clock.now(),
      identity.email !== undefined ? { email: identity.email, emailVerified: identity.emailVerified } : undefined,
    );
    return known.accountId;
  }
  const accountId = identity.provider === "web3" ? getAddress(identity.subject) : getAddress(bytesToHex(randomBytes(20)));
  try {
    await store.accounts.createWithIdentity({ ...key, accountId, email: identity.email, emailVerified: identity.emailVerified });
    return accountId;
  } catch (error) {
    // The same identity's first login, twice at once: the other request created it.
    if (error instanceof Duplicate) return (await store.accounts.findIdentity(key))!.accountId;
    throw error;
  }
}

/** Links a wallet (whose signature the caller has verified) to an unblocked account, so it can log into it. */
export async function linkWallet({ store }: Pick<Keyfob, "store">, accountId: string, wallet: string): Promise<void> {
  if ((await store.accounts.find(accountId))?.blockedAt) throw accountBlocked();
  const subject = getAddress(wallet);
  const linked = await store.accounts.findIdentity({ provider: "web3", subject });
  if (linked?.accountId === accountId) return;
  if (linked || (await store.accounts.find(subject))) {
    throw invalidRequest({ code: "wallet_taken" });
  }
  await store.accounts.addIdentity({ provider: "web3", subject, accountId });
}
