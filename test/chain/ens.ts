/**
 * ENS on a LocalChain: the registry, a public resolver and a Universal Resolver from ens/ (compiled
 * at test time like the other test contracts), and the records that make a primary name: the
 * name's address and avatar, and the address's reverse record.
 */
import path from "node:path";
import { labelhash, namehash, type Address, type Hex } from "viem";
import { CHAIN_DIR, compileContracts, deploy, type CompiledContract, type LocalChain } from "./local-chain";

export type LocalEns = {
  universalResolver: Address;
  /** Registers `name` (label by label, from the root) with the public resolver as its resolver. */
  register(name: string): Promise<void>;
  /** The name's address record (addr, coin type 60). */
  setAddress(name: string, address: Address): Promise<void>;
  setText(name: string, key: string, value: string): Promise<void>;
  /** The address's reverse record (<address>.addr.reverse's name): its claimed primary name. */
  setReverse(address: Address, name: string): Promise<void>;
  /** A primary name: registered, resolving to `address`, its reverse record, and an avatar when given. */
  setPrimary(address: Address, name: string, avatar?: string): Promise<void>;
};

export async function deployEns(chain: LocalChain): Promise<LocalEns> {
  const compiled = compileContracts(path.join(CHAIN_DIR, "ens"));
  const contract = (name: string): CompiledContract => {
    const found = compiled[name];
    if (!found) throw new Error(`${name} was not compiled`);
    return found;
  };
  const registry = await deploy(chain, contract("ENSRegistry"));
  const resolver = await deploy(chain, contract("PublicResolver"), [registry]);
  const universalResolver = await deploy(chain, contract("UniversalResolver"), [registry]);

  const send = async (address: Address, abi: CompiledContract["abi"], functionName: string, args: readonly unknown[]) => {
    const hash = await chain.wallet(0).writeContract({ address, abi, functionName, args } as never);
    const receipt = await chain.publicClient.waitForTransactionReceipt({ hash });
    if (receipt.status !== "success") throw new Error(`${functionName} failed in transaction ${hash}`);
  };
  const registered = new Set<string>([""]);
  const register = async (name: string) => {
    const labels = name.split(".");
    for (let i = labels.length - 1; i >= 0; i--) {
      const node = labels.slice(i).join(".");
      if (registered.has(node)) continue;
      const parent = labels.slice(i + 1).join(".");
      await send(registry, contract("ENSRegistry").abi, "setSubnodeOwner", [
        namehash(parent),
        labelhash(labels[i]),
        chain.wallet(0).account.address,
      ]);
      await send(registry, contract("ENSRegistry").abi, "setResolver", [namehash(node), resolver]);
      registered.add(node);
    }
  };
  const onResolver = (functionName: string, args: readonly unknown[]) => send(resolver, contract("PublicResolver").abi, functionName, args);
  const reverseName = (address: Address) => `${address.slice(2).toLowerCase()}.addr.reverse`;

  const ens: LocalEns = {
    universalResolver,
    register,
    setAddress: (name, address) => onResolver("setAddr", [namehash(name), address]),
    setText: (name, key, value) => onResolver("setText", [namehash(name), key, value]),
    async setReverse(address, name) {
      await register(reverseName(address));
      await onResolver("setName", [namehash(reverseName(address)) as Hex, name]);
    },
    async setPrimary(address, name, avatar) {
      await register(name);
      await ens.setAddress(name, address);
      await ens.setReverse(address, name);
      if (avatar !== undefined) await ens.setText(name, "avatar", avatar);
    },
  };
  return ens;
}
