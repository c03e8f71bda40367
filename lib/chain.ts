import { defineChain, type Chain } from "viem";

/** The configured chain (CHAIN_ID) on the RPC_URL providers, for viem clients. */
export function rpcChain(chainId: number, rpcUrls: string[]): Chain {
  return defineChain({
    id: chainId,
    name: `chain ${chainId}`,
    nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
    rpcUrls: { default: { http: rpcUrls } },
  });
}
