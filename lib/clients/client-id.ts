import { getAddress, isAddress } from "viem";

/** The dashboard's own client, which Keyfob registers for itself. */
export const ADMIN_CLIENT_ID = "keyfob-admin";

/** Client ids that are addresses (developer licenses) are kept EIP-55 checksummed, so any case matches. */
export function normalizeClientId(clientId: string): string {
  return isAddress(clientId, { strict: false }) ? getAddress(clientId) : clientId;
}

/** A client whose id is a license address: the only kind that has signers (Flow A names the client id as `address` for them). */
export const isLicense = (clientId: string) => isAddress(clientId, { strict: false });
