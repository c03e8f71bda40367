import { createHmac, timingSafeEqual } from "node:crypto";
import type { Address } from "viem";
import { parseSiweMessage, validateSiweMessage } from "viem/siwe";
import type { Keyfob } from "../keyfob";
import {
  completeAuthorization,
  contractSignatureAccepted,
  expiredInteraction,
  findInteraction,
  type Completion,
} from "../interactions/interactions";
import { invalidGrant, invalidRequest, OAuthError } from "../oauth/errors";
import { isOpaque } from "../oauth/opaque";
import { linkWallet } from "../accounts/accounts";
import { requireStrongLogin, type SignedInRequester } from "../accounts/sensitive-changes";
import { refreshEnsProfile } from "../ens/profiles";
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
  keyfob: Pick<Keyfob, "config" | "clock" | "signatures">,
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
    throw invalidRequest({ code: "siwe_not_eip4361" });
  }
  const now = keyfob.clock.now();
  const issuedHere =
    parsed.address &&
    parsed.domain === new URL(issuerUrl).host &&
    parsed.uri === issuerUrl &&
    parsed.chainId === chainId &&
    parsed.version === "1" &&
    validateSiweMessage({ message: parsed, nonce, time: now });
  if (!issuedHere || !parsed.address) throw invalidGrant({ code: "siwe_not_issued_here" });
  if (parsed.resources?.length !== 1 || parsed.resources[0] !== SIWE_PURPOSE[purpose]) {
    throw invalidGrant({ code: "siwe_wrong_purpose" });
  }
  // An unparseable Issued At is an Invalid Date, which every comparison would let through.
  const issuedAt = parsed.issuedAt?.getTime();
  if (issuedAt === undefined || Number.isNaN(issuedAt)) throw invalidGrant({ code: "siwe_no_issued_at" });
  const age = now.getTime() - issuedAt;
  if (age > MAX_MESSAGE_AGE_MS || age < -60_000) throw invalidGrant({ code: "siwe_clock" });
  const kind = await verifySignature({ message, address: parsed.address, signature }, keyfob.signatures);
  return { address: parsed.address, kind };
}

/**
 * A nonce for linking a wallet to a signed-in account: bound to the account and an expiry by an
 * HMAC, so it needs no storage; a replay can only link the same wallet to the same account again.
 */
export function accountLinkNonce(keyfob: Pick<Keyfob, "clock" | "macKeys">, accountId: string, now = keyfob.clock.now().getTime()): string {
  const expires = Math.floor(now / 1000 + 600).toString(16);
  return `${expires}${linkMac(keyfob, accountId, expires)}`;
}

export function checkAccountLinkNonce(
  keyfob: Pick<Keyfob, "clock" | "macKeys">,
  accountId: string,
  nonce: string,
  now = keyfob.clock.now().getTime(),
): boolean {
  const expires = nonce.slice(0, 8);
  const mac = Buffer.from(nonce.slice(8));
  const expected = Buffer.from(linkMac(keyfob, accountId, expires));
  return mac.length === expected.length && timingSafeEqual(mac, expected) && parseInt(expires, 16) * 1000 > now;
}

function linkMac({ macKeys }: Pick<Keyfob, "macKeys">, accountId: string, expires: string): string {
  return createHmac("sha256", macKeys.walletLink).update(`${accountId}:${expires}`).digest("hex").slice(0, 32);
}

/**
 * Links the wallet that signed `message` to a signed-in account: the session asking must be a
 * strong, recent login (requireStrongLogin), and the message must carry a link nonce issued for
 * this account (accountLinkNonce) and pass the same checks as a login. Only a signature that
 * recovers to the wallet's address links it: a smart account's, which the RPC provider vouches
 * for, could otherwise let a lying provider attach any address to an account.
 */
export async function verifyAccountLink(
  keyfob: Pick<Keyfob, "config" | "clock" | "store" | "macKeys" | "audit" | "signatures">,
  accountId: string,
  message: string,
  signature: string,
  requester: SignedInRequester,
): Promise<Address> {
  requireStrongLogin(keyfob, accountId, "account.wallet_linked", requester);
  let nonce: string | undefined;
  try {
    nonce = parseSiweMessage(message).nonce;
  } catch {
    throw invalidRequest({ code: "siwe_not_eip4361" });
  }
  if (!nonce || !checkAccountLinkNonce(keyfob, accountId, nonce)) throw invalidGrant({ code: "wallet_link_expired" });
  const { address: wallet, kind } = await verifyLoginMessage(keyfob, message, signature, nonce, "linkWallet");
  if (kind === "contract") throw invalidGrant({ code: "wallet_link_contract" });
  await linkWallet(keyfob, accountId, wallet);
  return wallet;
}

/** A wallet login on the hosted page: the EIP-4361 message must carry this interaction's nonce. */
export async function loginWithWallet(
  keyfob: Pick<Keyfob, "config" | "clock" | "store" | "audit" | "signatures" | "ens">,
  interactionId: string,
  message: string,
  signature: string,
  client: { ip?: string; userAgent?: string } = {},
): Promise<Completion> {
  if (!isOpaque(interactionId)) throw expiredInteraction();
  // EIP-4361 messages are lines of printable text: a NUL or another control character (line feeds
  // aside) is no sign-in message, whatever the wallet signed.
  // biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
  if (/[\x00-\x09\x0b-\x1f\x7f]/.test(message)) throw invalidRequest({ code: "siwe_control_character" });
  const interaction = await findInteraction(keyfob, interactionId);
  if (!interaction?.walletNonce) throw expiredInteraction();
  const { address, kind } = await verifyLoginMessage(keyfob, message, signature, interaction.walletNonce, "login").catch(
    (error: unknown) => {
      // A refused wallet login is kept with its reason (the description the user saw).
      if (error instanceof OAuthError)
        keyfob.audit.record({
          action: "login.failed",
          outcome: error.code,
          clientId: interaction.clientId,
          ip: client.ip,
          detail: `wallet: ${error.message}`,
        });
      throw error;
    },
  );
  if (kind === "contract" && !contractSignatureAccepted(interaction.clientId, keyfob.config)) {
    throw new OAuthError("invalid_grant", { code: "admin_contract_signature" });
  }
  // The ENS profile is kept before the browser gets the code: the token request only reads it.
  const [completion] = await Promise.all([
    completeAuthorization(keyfob, interactionId, {
      identity: { provider: "web3", subject: address, emailVerified: false },
      contractSignature: kind === "contract",
      ...client,
    }),
    refreshEnsProfile(keyfob, address),
  ]);
  return completion;
}
