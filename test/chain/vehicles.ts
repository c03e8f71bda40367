/**
 * The platform's vehicle contract on a LocalChain (vehicles/Vehicle.sol, compiled at test time like
 * the other test contracts): deploy it, mint, transfer, and set privileges as a vehicle's owner.
 */
import path from "node:path";
import type { Address, Hex } from "viem";
import { CHAIN_DIR, compileContracts, deploy, type CompiledContract, type LocalChain } from "./local-chain";

export type LocalVehicles = {
  address: Address;
  /** Mints `tokenId` to hardhat's account `owner`. */
  mint(tokenId: bigint, owner?: number): Promise<bigint>;
  /** Transfers `tokenId` from hardhat's account `from` to `to`; returns the block it was mined in. */
  transfer(tokenId: bigint, from: number, to: Address): Promise<bigint>;
  /** Grants (or, with `expires` in the past, ends) a privilege as hardhat's account `owner`; returns the block. */
  setPrivilege(tokenId: bigint, privilege: number, user: Address, expires: bigint, owner?: number): Promise<bigint>;
};

let compiled: CompiledContract | undefined;

/** Deploys a vehicle contract; with `at`, its code is put at that address too (hardhat_setCode) and that address is the contract. */
export async function deployVehicles(chain: LocalChain, at?: Address): Promise<LocalVehicles> {
  compiled ??= compileContracts(path.join(CHAIN_DIR, "vehicles")).Vehicle;
  const contract = compiled;
  let address = await deploy(chain, contract);
  if (at) {
    const code = await chain.publicClient.getCode({ address });
    await chain.publicClient.request({ method: "hardhat_setCode" as never, params: [at, code as Hex] as never });
    address = at;
  }
  const send = async (from: number, functionName: string, args: readonly unknown[]) => {
    const hash = await chain.wallet(from).writeContract({ address, abi: contract.abi, functionName, args } as never);
    const receipt = await chain.publicClient.waitForTransactionReceipt({ hash });
    if (receipt.status !== "success") throw new Error(`${functionName} failed in transaction ${hash}`);
    return receipt.blockNumber;
  };
  return {
    address,
    mint: (tokenId, owner = 0) => send(owner, "mint", [chain.wallet(owner).account.address, tokenId]),
    transfer: (tokenId, from, to) => send(from, "transferFrom", [chain.wallet(from).account.address, to, tokenId]),
    setPrivilege: (tokenId, privilege, user, expires, owner = 0) =>
      send(owner, "setPrivilege", [tokenId, BigInt(privilege), user, expires]),
  };
}
