/**
 * The test contracts in contracts/: LicenseAccount (ERC-1271, valid when its owner key signed the
 * hash) and LicenseAccountFactory (CREATE2), deployed on a LocalChain.
 */
import { randomBytes } from "node:crypto";
import {
  bytesToHex,
  encodeDeployData,
  encodeFunctionData,
  getContractAddress,
  isAddressEqual,
  serializeErc6492Signature,
  type Address,
  type Hex,
} from "viem";
import { deploy, type CompiledContract, type LocalChain } from "./local-chain";

export type LicenseAccounts = {
  factory: Address;
  /** The CREATE2 address of the account for (owner, salt), deployed or not. */
  predict(owner: Address, salt: Hex): Promise<Address>;
  /** Deploys the account for (owner, salt) through the factory and returns its address. */
  deployAccount(owner: Address, salt?: Hex): Promise<Address>;
  /** The factory call that deploys the account: the `factoryData` of an ERC-6492 signature. */
  deployData(owner: Address, salt: Hex): Hex;
  /** Wraps an owner's signature for the not-yet-deployed account (owner, salt) per ERC-6492. */
  wrapErc6492(owner: Address, salt: Hex, signature: Hex): Hex;
  isDeployed(account: Address): Promise<boolean>;
};

export const randomSalt = (): Hex => bytesToHex(randomBytes(32));

export async function deployLicenseAccounts(chain: LocalChain, compiled: Record<string, CompiledContract>): Promise<LicenseAccounts> {
  const account = compiled.LicenseAccount;
  const factoryContract = compiled.LicenseAccountFactory;
  if (!account || !factoryContract) throw new Error("LicenseAccount and LicenseAccountFactory must be compiled");
  const factory = await deploy(chain, factoryContract);

  const deployData = (owner: Address, salt: Hex) =>
    encodeFunctionData({ abi: factoryContract.abi, functionName: "deploy", args: [owner, salt] });

  const predict = async (owner: Address, salt: Hex): Promise<Address> => {
    const onChain = (await chain.publicClient.readContract({
      address: factory,
      abi: factoryContract.abi,
      functionName: "addressOf",
      args: [owner, salt],
    })) as Address;
    // The factory's own computation must agree with CREATE2 as viem computes it.
    const computed = getContractAddress({
      opcode: "CREATE2",
      from: factory,
      salt,
      bytecode: encodeDeployData({ abi: account.abi, bytecode: account.bytecode, args: [owner] }),
    });
    if (!isAddressEqual(onChain, computed)) throw new Error(`factory predicts ${onChain}, CREATE2 gives ${computed}`);
    return computed;
  };

  const isDeployed = async (address: Address) => ((await chain.publicClient.getCode({ address })) ?? "0x") !== "0x";

  return {
    factory,
    predict,
    deployData,
    isDeployed,
    wrapErc6492: (owner, salt, signature) => serializeErc6492Signature({ address: factory, data: deployData(owner, salt), signature }),
    async deployAccount(owner, salt = randomSalt()) {
      const hash = await chain.wallet(0).writeContract({
        address: factory,
        abi: factoryContract.abi,
        functionName: "deploy",
        args: [owner, salt],
      });
      const receipt = await chain.publicClient.waitForTransactionReceipt({ hash });
      if (receipt.status !== "success") throw new Error(`account deployment failed in transaction ${hash}`);
      const address = await predict(owner, salt);
      if (!(await isDeployed(address))) throw new Error(`no code at ${address} after deployment`);
      return address;
    },
  };
}
