import { createHmac, timingSafeEqual } from "node:crypto";
import type { Address } from "viem";
import { parseSiweMessage, validateSiweMessage } from "viem/siwe";
import type { Keyfob } from "../keyfob";
import { invalidGrant, invalidRequest } from "../oauth/errors";
import { linkWallet } from "../accounts/accounts";
import { SIWE_PURPOSE, type SiwePurpose } from "./purpose";
import { verifySignature, type SignatureKind } from "./signature";

/** How long a wallet login message may take between being issued and being submitted. */
const MAX_MESSAGE_AGE_MS = 10 * 60_000;

/**
 * Verifies an EIP-4361 message from one of Keyfob's pages: issued for this server (domain, URI,
 * chain) for this purpose (its Resources line) with the expected single-use nonce, recent, and
 * signed by its address (plain wallet, or ERC-1271/6492 smart account through RPC_URL). Returns the
 * address and how the signature was accepted.
 */
export async function verifyLoginMessage(
  keyfob: Keyfob,
  message: string,
  signature: string,
  nonce: string,
  purpose: SiwePurpose,
): Promise<{ address: Address; kind: SignatureKind }> {
  const { issuerUrl, chainId } = keyfob.config;
  let parsed: ReturnType<typeof parseSiweMessage>;
  try {
    parsed = parseSiweMessage(message);
  } catch {
    throw invalidRequest("the sign-in message is not an EIP-4361 message");
  }
  const now = new Date();
  const issuedHere =
    parsed.address &&
    parsed.domain === new URL(issuerUrl).host &&
    parsed.uri === issuerUrl &&
    parsed.chainId === chainId &&
    parsed.version === "1" &&
    validateSiweMessage({ message: parsed, nonce, time: now });
  if (!issuedHere || !parsed.address) throw invalidGrant("the sign-in message was not issued for this login");
  if (parsed.resources?.length !== 1 || parsed.resources[0] !== SIWE_PURPOSE[purpose]) {
    throw invalidGrant("the sign-in message was not written for this page (its Resources line names another purpose)");
  }
  // An unparseable Issued At is an Invalid Date, which every comparison would let through.
  const issuedAt = parsed.issuedAt?.getTime();
  if (issuedAt === undefined || Number.isNaN(issuedAt)) throw invalidGrant("the sign-in message has no valid Issued At time");
  const age = now.getTime() - issuedAt;
  if (age > MAX_MESSAGE_AGE_MS || age < -60_000) throw invalidGrant("the sign-in message is too old or from the future");
  const kind = await verifySignature({ message, address: parsed.address, signature }, keyfob.signatures);
  return { address: parsed.address, kind };
}

/**
 * A nonce for linking a wallet to a signed-in account: bound to the account and an expiry by an
 * HMAC, so it needs no storage; a replay can only link the same wallet to the same account again.
 */
export function accountLinkNonce(keyfob: Keyfob, accountId: string, now = Date.now()): string {
  const expires = Math.floor(now / 1000 + 600).toString(16);
  return `${expires}${linkMac(keyfob, accountId, expires)}`;
}

export function checkAccountLinkNonce(keyfob: Keyfob, accountId: string, nonce: string, now = Date.now()): boolean {
  const expires = nonce.slice(0, 8);
  const mac = Buffer.from(nonce.slice(8));
  const expected = Buffer.from(linkMac(keyfob, accountId, expires));
  return mac.length === expected.length && timingSafeEqual(mac, expected) && parseInt(expires, 16) * 1000 > now;
}

function linkMac({ macKeys }: Keyfob, accountId: string, expires: string): string {
  return createHmac("sha256", macKeys.walletLink).update(`${accountId}:${expires}`).digest("hex").slice(0, 32);
}

/**
 * Links the wallet that signed `message` to a signed-in account: the message must carry a link
 * nonce issued for this account (accountLinkNonce) and pass the same checks as a login. Only a
 * signature that recovers to the wallet's address links it: a smart account's, which the RPC
 * provider vouches for, could otherwise let a lying provider attach any address to an account.
 */
export async function verifyAccountLink(keyfob: Keyfob, accountId: string, message: string, signature: string): Promise<Address> {
  let nonce: string | undefined;
  try {
    nonce = parseSiweMessage(message).nonce;
  } catch {
    throw invalidRequest("the sign-in message is not an EIP-4361 message");
  }
  if (!nonce || !checkAccountLinkNonce(keyfob, accountId, nonce)) throw invalidGrant("the link request has expired; try again");
  const { address: wallet, kind } = await verifyLoginMessage(keyfob, message, signature, nonce, "linkWallet");
  if (kind === "contract") throw invalidGrant("a smart-account (contract) signature cannot link a wallet; sign with the wallet's own key");
  await linkWallet(keyfob, accountId, wallet);
  return wallet;
}
