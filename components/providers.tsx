"use client";
/**
 * wagmi and react-query for the wallet parts of the hosted pages. The pages only connect a wallet
 * and ask it to sign a message, so no RPC endpoint is used: every chain's transport refuses reads,
 * and nothing leaves the browser except what the wallet itself does.
 */
import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { useState, type ReactNode } from "react";
import { defineChain, type Chain } from "viem";
import { base, baseSepolia, mainnet, polygon, polygonAmoy, sepolia } from "viem/chains";
import { createConfig, custom, injected, WagmiProvider } from "wagmi";

const KNOWN_CHAINS: Chain[] = [mainnet, sepolia, polygon, polygonAmoy, base, baseSepolia];

/** The chain Keyfob's sign-in messages name (CHAIN_ID); a generic one when it is not a well-known chain. */
export function chainFor(chainId: number): Chain {
  return (
    KNOWN_CHAINS.find((chain) => chain.id === chainId) ??
    defineChain({ id: chainId, name: `Chain ${chainId}`, nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 }, rpcUrls: { default: { http: [] } } })
  );
}

/** Name of a chain the wallet may be on, for messages. */
export function chainName(chainId: number): string {
  return KNOWN_CHAINS.find((chain) => chain.id === chainId)?.name ?? `chain ${chainId}`;
}

const noRpc = custom({
  async request() {
    throw new Error("Keyfob's login page reads nothing from the chain");
  },
});

export function Web3Providers({ chainId, children }: { chainId: number; children: ReactNode }) {
  const [state] = useState(() => {
    const chain = chainFor(chainId);
    return {
      queryClient: new QueryClient({ defaultOptions: { mutations: { retry: false } } }),
      config: createConfig({
        chains: [chain],
        // One injected wallet (window.ethereum). EIP-6963 discovery is off so that the page shows a
        // single, predictable "browser wallet" option.
        connectors: [injected({ shimDisconnect: true })],
        multiInjectedProviderDiscovery: false,
        transports: { [chain.id]: noRpc },
        ssr: true,
      }),
    };
  });
  return (
    <WagmiProvider config={state.config}>
      <QueryClientProvider client={state.queryClient}>{children}</QueryClientProvider>
    </WagmiProvider>
  );
}
