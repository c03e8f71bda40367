import { randomBytes } from "node:crypto";
import { getAddress, type Address } from "viem";

const NONCE_ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
const NONCE_LENGTH = 30;

/** 30 random characters of [0-9a-zA-Z] (about 178 bits), by rejection sampling so none is favoured. */
export function generateNonce(): string {
  let nonce = "";
  while (nonce.length < NONCE_LENGTH) {
    for (const byte of randomBytes(NONCE_LENGTH * 2)) {
      // 248 = 4 * 62: bytes above it would favour the first characters.
      if (byte < 248 && nonce.length < NONCE_LENGTH) nonce += NONCE_ALPHABET[byte % 62];
    }
  }
  return nonce;
}

/** RFC 3339 in UTC with second precision, as the platform's challenges carry it: 2024-05-09T16:11:21Z. */
export function formatIssuedAt(date: Date): string {
  return date.toISOString().replace(/\.\d{3}Z$/, "Z");
}

export type ChallengeInput = {
  issuerUrl: string;
  /** The redirect URI the challenge is requested for ("domain" in Flow A). */
  domain: string;
  address: Address;
  chainId: number;
  nonce: string;
  issuedAt: Date;
};

/**
 * The Flow A challenge: an EIP-4361 message in the exact layout existing clients sign, byte for byte.
 * viem's createSiweMessage cannot produce it (it writes milliseconds in Issued At), so it is laid
 * out here and the tests check that viem's parseSiweMessage reads it back.
 */
export function createChallengeMessage(input: ChallengeInput): string {
  return [
    `${new URL(input.issuerUrl).host} wants you to sign in with your Ethereum account:`,
    getAddress(input.address),
    "",
    `${new URL(input.domain).hostname} is asking you sign in.`,
    "",
    `URI: ${input.issuerUrl}`,
    "Version: 1",
    `Chain ID: ${input.chainId}`,
    `Nonce: ${input.nonce}`,
    `Issued At: ${formatIssuedAt(input.issuedAt)}`,
  ].join("\n");
}
