import { getAddress } from "viem";
import type { Keyfob } from "../keyfob";
import type { Store } from "../store";
import type { AccountDeletion, AccountQuery } from "../store/contract";

/**
 * Accounts as admins see them: found by address, email or id, with their identities (wallets,
 * Google, Apple, passkeys), and deleted with everything they hold. (Blocking: ./blocking.ts.)
 */

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;

/**
 * Accounts matching `query`, newest first: an address finds the account of that id and the
 * account a wallet of that address is linked to; an email (anything with `@`) the accounts of
 * identities with that email, in any case; any other text is looked for in ids, identity subjects
 * (wallet addresses, upstream subjects) and emails. No query lists every account.
 */
export function searchAccounts(store: Store, query: string | undefined, page: number, pageSize: number) {
  const text = query?.trim() ?? "";
  // Anything but a whole address is looked for as part of an id, subject or email ("alice@", "@example.com").
  const search: AccountQuery = ADDRESS.test(text) ? { address: getAddress(text) } : text ? { text } : {};
  return store.accounts.search(search, (page - 1) * pageSize, pageSize);
}

/** The account an admin names by id, address of a linked wallet, or email (when exactly one account has it). */
export async function findAccount(store: Store, reference: string): Promise<{ id: string } | { ambiguous: string[] } | undefined> {
  const text = reference.trim();
  if (!text) return undefined;
  if (ADDRESS.test(text)) {
    const address = getAddress(text);
    if (await store.accounts.find(address)) return { id: address };
    const linked = await store.accounts.findIdentity({ provider: "web3", subject: address });
    return linked ? { id: linked.accountId } : undefined;
  }
  const byEmail = await store.accounts.withEmail(text, 10);
  if (byEmail.length === 1) return { id: byEmail[0] };
  if (byEmail.length > 1) return { ambiguous: byEmail };
  return (await store.accounts.find(text)) ? { id: text } : undefined;
}

/** Counts of what an account holds: live access tokens (its wallets' too) and live refresh grants. */
export type AccountHoldings = { accessTokens: number; refreshGrants: number };

/** What an account holds now. */
export async function accountHoldings(store: Store, accountId: string, now: Date): Promise<AccountHoldings> {
  const holders = await store.accounts.holders(accountId);
  const [accessTokens, refreshGrants] = await Promise.all([
    store.tokens.countActive({ userIds: holders }, now),
    store.tokens.countLiveGrants({ accountId }, now),
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
export function deleteAccount(
  { store, clock }: Pick<Keyfob, "store" | "clock">,
  accountId: string,
  now = clock.now(),
): Promise<AccountDeletion | undefined> {
  return store.accounts.delete(accountId, now);
}
