import { getAddress, isAddress } from "viem";

/** The dashboard's own client, which Keyfob registers for itself. */
export const ADMIN_CLIENT_ID = "keyfob-admin";

/** /account's own client, which Keyfob registers for itself (lib/accounts/account-login.ts). */
export const ACCOUNT_CLIENT_ID = "keyfob-account";

/** Client ids that are addresses (developer licenses) are kept EIP-55 checksummed, so any case matches. */
export function normalizeClientId(clientId: string): string {
  return isAddress(clientId, { strict: false }) ? getAddress(clientId) : clientId;
}
