/**
 * The chain of the bench's vehicle workload: a hardhat node (test/chain/local-chain.ts, a child
 * process of the bench), the platform's Vehicle contract deployed on it (test/chain/vehicles.ts),
 * a few vehicles minted to hardhat's first account, and each granted to the bench's license with
 * the privilege its exchanges ask for. Keyfob's vehicle instance and the floor read this node.
 */
import type { Address } from "viem";
import { vehicleDid } from "../lib/vehicles/asset";
import { startLocalChain } from "../test/chain/local-chain";
import { deployVehicles } from "../test/chain/vehicles";
import { findListener } from "./procstat";

/** GetNonLocationHistory (lib/vehicles/privileges.ts): what every exchange asks for. */
export const VEHICLE_PRIVILEGE = { id: 1, scope: "privilege:GetNonLocationHistory" } as const;
/** The vehicles the exchanges go round: each exchange reads one vehicle's owner and privilege. */
const VEHICLES = 8;
/** A grant that does not end during the bench. */
const FAR_FUTURE = 2n ** 40n;

export type VehicleChain = {
  rpcUrl: string;
  chainId: number;
  contract: Address;
  /** The vehicles' DIDs, as a token exchange's resource names them. */
  resources: string[];
  /** The node's process, whose CPU the vehicle targets are charged. */
  pid?: number;
  stop(): Promise<void>;
};

/** Starts the node, deploys the contract, mints the vehicles and grants `license` the privilege on each. */
export async function startVehicleChain(license: Address): Promise<VehicleChain> {
  const chain = await startLocalChain();
  try {
    const vehicles = await deployVehicles(chain);
    const resources: string[] = [];
    for (let tokenId = 1n; tokenId <= VEHICLES; tokenId++) {
      await vehicles.mint(tokenId);
      await vehicles.setPrivilege(tokenId, VEHICLE_PRIVILEGE.id, license, FAR_FUTURE);
      resources.push(vehicleDid({ chainId: chain.chainId, contract: vehicles.address, tokenId }));
    }
    return {
      rpcUrl: chain.rpcUrl,
      chainId: chain.chainId,
      contract: vehicles.address,
      resources,
      pid: findListener(Number(new URL(chain.rpcUrl).port)),
      stop: chain.stop,
    };
  } catch (error) {
    await chain.stop();
    throw error;
  }
}
