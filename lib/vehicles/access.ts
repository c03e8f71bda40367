import { createPublicClient, isAddressEqual, parseAbi, type Address, type PublicClient } from "viem";
import { isExecutionRevert, rpcChain } from "../chain";
import type { Config } from "../config";
import { log } from "../log";
import { chainRpcFailures } from "../metrics";
import { OAuthError } from "../oauth/errors";
import type { StaticVehicleGrant, Vehicle } from "./asset";
import type { PrivilegeId } from "./privileges";
import { tracedHttp } from "../tracing";

/**
 * The access policy: which privileges the owner of a vehicle has granted an address, now. Behind
 * this seam the on-chain policy (the vehicle contract's `hasPrivilege`, on every RPC_URL provider)
 * and the development policy (VEHICLE_GRANTS) answer alike.
 */
export type VehicleAccessPolicy = {
  /** Where the decision comes from, for the audit log and the docs. */
  readonly source: "chain" | "static";
  /** Which of `privileges` `grantee` holds on `vehicle`; throws temporarily_unavailable (503) when it cannot be told. */
  decide(vehicle: Vehicle, grantee: Address, privileges: readonly PrivilegeId[]): Promise<AccessDecision>;
};

export type AccessDecision = {
  /** The vehicle exists (its contract knows the token id). */
  exists: boolean;
  /** The privileges asked for that the grantee holds. */
  granted: PrivilegeId[];
  /** The block the chain was read at: a transfer or privilege change in a later block ends the tokens issued on it. */
  block?: bigint;
};

/** The vehicle contract's functions Keyfob reads, and the events it watches (lib/vehicles/watcher.ts). */
export const VEHICLE_ABI = parseAbi([
  "function ownerOf(uint256 tokenId) view returns (address)",
  "function hasPrivilege(uint256 tokenId, uint256 privId, address user) view returns (bool)",
  "event Transfer(address indexed from, address indexed to, uint256 indexed tokenId)",
  "event PrivilegeSet(uint256 indexed tokenId, uint256 version, uint256 indexed privId, address indexed user, uint256 expires)",
]);

/** The configured policy: VEHICLE_GRANTS when set, else the chain; none without either. */
export function createAccessPolicy(
  config: Pick<Config, "vehicleGrants" | "rpcUrls" | "chainId" | "rpcQuorum">,
): VehicleAccessPolicy | undefined {
  if (config.vehicleGrants !== undefined) return staticPolicy(config.vehicleGrants);
  if (config.rpcUrls.length === 0) return undefined;
  return chainPolicy(config.rpcUrls, config.chainId, config.rpcQuorum);
}

/** Development: the grants configured, and nothing else; a vehicle no grant names does not exist. */
export function staticPolicy(grants: readonly StaticVehicleGrant[]): VehicleAccessPolicy {
  const same = (a: Vehicle, b: Vehicle) => a.chainId === b.chainId && isAddressEqual(a.contract, b.contract) && a.tokenId === b.tokenId;
  return {
    source: "static",
    async decide(vehicle, grantee, privileges) {
      const named = grants.filter((grant) => same(grant.vehicle, vehicle));
      const held = new Set(named.filter((grant) => isAddressEqual(grant.grantee, grantee)).flatMap((grant) => grant.privileges));
      return { exists: named.length > 0, granted: privileges.filter((id) => held.has(id)) };
    },
  };
}

const unavailable = () => new OAuthError("temporarily_unavailable", "the chain could not be reached to read the vehicle's privileges");

/**
 * The chain: each provider is asked on its own, at one block (the lowest head among those that
 * answer, so that a lagging provider reads the same state), for the token's owner and each
 * privilege. `quorum` providers must answer, and every answer must agree; otherwise 503 and no
 * token: a lying or compromised provider can stop exchanges, never grant one. Nothing is cached.
 */
export function chainPolicy(rpcUrls: readonly string[], chainId: number, quorum = rpcUrls.length): VehicleAccessPolicy {
  const providers = rpcUrls.map((url) =>
    createPublicClient({ chain: rpcChain(chainId, [url]), transport: tracedHttp(url, { timeout: 5_000, retryCount: 1 }) }),
  );
  return {
    source: "chain",
    async decide(vehicle, grantee, privileges) {
      const heads = await Promise.allSettled(providers.map((provider) => provider.getBlockNumber({ cacheTime: 0 })));
      const answered = heads.flatMap((head) => (head.status === "fulfilled" ? [head.value] : []));
      if (answered.length < quorum) {
        chainRpcFailures.inc(heads.length - answered.length);
        throw unavailable();
      }
      const block = answered.reduce((low, head) => (head < low ? head : low));
      const reads = await Promise.allSettled(
        providers.map((provider, i) =>
          heads[i].status === "fulfilled" ? read(provider, vehicle, grantee, privileges, block) : Promise.reject(),
        ),
      );
      const decisions = reads.flatMap((r) => (r.status === "fulfilled" ? [r.value] : []));
      chainRpcFailures.inc(reads.length - decisions.length);
      const key = (d: Omit<AccessDecision, "block">) => `${d.exists}:${d.granted.join(",")}`;
      if (decisions.length > 0 && decisions.some((d) => key(d) !== key(decisions[0]))) {
        log.warn("RPC providers disagree on a vehicle's privileges; refused", { answers: decisions.map(key) });
        throw unavailable();
      }
      if (decisions.length < quorum) throw unavailable();
      return { ...decisions[0], block };
    },
  };
}

/** One provider's answer at `block`; a failure to ask (not a revert) rejects. */
async function read(
  provider: PublicClient,
  vehicle: Vehicle,
  grantee: Address,
  privileges: readonly PrivilegeId[],
  blockNumber: bigint,
): Promise<Omit<AccessDecision, "block">> {
  const call = { address: vehicle.contract, abi: VEHICLE_ABI, blockNumber } as const;
  // A revert is the contract's answer, no: ERC-721's ownerOf reverts for a token that does not exist.
  const no = (error: unknown) => {
    if (isExecutionRevert(error)) return false;
    throw error;
  };
  const owner = provider.readContract({ ...call, functionName: "ownerOf", args: [vehicle.tokenId] }).then(() => true, no);
  const held = privileges.map((id) =>
    provider.readContract({ ...call, functionName: "hasPrivilege", args: [vehicle.tokenId, BigInt(id), grantee] }).catch(no),
  );
  const [exists, ...answers] = await Promise.all([owner, ...held]);
  return { exists, granted: exists ? privileges.filter((_id, i) => answers[i]) : [] };
}
