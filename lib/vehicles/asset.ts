import { getAddress, type Address } from "viem";

/**
 * A vehicle as the platform names it: an ERC-721 token by its asset DID,
 * `did:erc721:<chainId>:<contract>:<tokenId>` (the resource of a token exchange, RFC 8707, and the
 * `asset` claim of a vehicle token).
 */
export type Vehicle = { chainId: number; contract: Address; tokenId: bigint };

/** The DID of a vehicle, its contract address in lower case, as the platform writes it. */
export const vehicleDid = ({ chainId, contract, tokenId }: Vehicle): string => `did:erc721:${chainId}:${contract.toLowerCase()}:${tokenId}`;

/** A token id: a decimal uint256 without leading zeros. */
const TOKEN_ID = /^(0|[1-9][0-9]{0,77})$/;
const MAX_UINT256 = 2n ** 256n - 1n;

/** Parses a vehicle's DID; undefined when the value is not one (any case of the address is accepted). */
export function parseVehicleDid(value: string): Vehicle | undefined {
  const match = /^did:erc721:([1-9][0-9]{0,15}):(0x[0-9a-fA-F]{40}):([0-9]+)$/.exec(value);
  if (!match) return undefined;
  return vehicleOf(Number(match[1]), match[2], match[3]);
}

/** A vehicle from its parts, as the platform's legacy request names them; undefined when one is malformed. */
export function vehicleOf(chainId: number, contract: string, tokenId: string | number): Vehicle | undefined {
  const id = String(tokenId);
  if (!Number.isSafeInteger(chainId) || chainId <= 0 || !/^0x[0-9a-fA-F]{40}$/.test(contract) || !TOKEN_ID.test(id)) return undefined;
  const value = BigInt(id);
  if (value > MAX_UINT256) return undefined;
  return { chainId, contract: getAddress(contract.toLowerCase()), tokenId: value };
}

/** A grant of the development access policy (VEHICLE_GRANTS): privileges on a vehicle for an address. */
export type StaticVehicleGrant = { vehicle: Vehicle; grantee: Address; privileges: number[] };
