import { randomBytes } from "node:crypto";
import { getAddress, isAddress } from "viem";

/** The dashboard's own client, which Keyfob registers for itself. */
export const ADMIN_CLIENT_ID = "keyfob-admin";

/** /account's own client, which Keyfob registers for itself (lib/accounts/account-login.ts). */
export const ACCOUNT_CLIENT_ID = "keyfob-account";

/** Client ids that are addresses (developer licenses) are kept EIP-55 checksummed, so any case matches. */
export function normalizeClientId(clientId: string): string {
  return isAddress(clientId, { strict: false }) ? getAddress(clientId) : clientId;
}

/** What a client id can be: 1 to 128 printable ASCII characters without spaces. */
export const CLIENT_ID = /^[\x21-\x7e]{1,128}$/;

/**
 * The client a request names before anything is verified (for rate limits, CORS and the audit
 * log), or undefined when the value cannot be a client id: nothing else is counted or looked up.
 */
export function claimedClientId(value: string | undefined | null): string | undefined {
  return value && CLIENT_ID.test(value) ? value : undefined;
}

/** A client id for clients that are not a license address. */
export function generateClientId(): string {
  return `kf_${randomBytes(16).toString("base64url")}`;
}

/** A client whose id is a license address: the only kind that has signers (Flow A names the client id as `address` for them). */
export const isLicense = (clientId: string) => isAddress(clientId, { strict: false });
