"use client";
/**
 * wagmi and react-query for the wallet parts of the hosted pages. The pages only connect a wallet
 * and ask it to sign a message, so no RPC endpoint is used: every chain's transport refuses reads,
 * and nothing leaves the browser except what the wallet itself does.
 *
 * Wallets: every browser wallet that announces itself (EIP-6963, wagmi's multi-injected provider
 * discovery), a plain `window.ethereum` (the `injected` connector), and, with
 * WALLETCONNECT_PROJECT_ID, WalletConnect for phone wallets. WalletConnect is loaded only when the
 * person picks it: its provider (and the connection to its relay) is not set up at page load.
 */
import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { useState, type ReactNode } from "react";
import { defineChain, type Chain } from "viem";
import { base, baseSepolia, mainnet, polygon, polygonAmoy, sepolia } from "viem/chains";
import { createConfig, custom, injected, WagmiProvider, type CreateConnectorFn } from "wagmi";
import { walletConnect } from "wagmi/connectors/walletConnect";

const KNOWN_CHAINS: Chain[] = [mainnet, sepolia, polygon, polygonAmoy, base, baseSepolia];

/** The chain Keyfob's sign-in messages name (CHAIN_ID); a generic one when it is not a well-known chain. */
export function chainFor(chainId: number): Chain {
  return (
    KNOWN_CHAINS.find((chain) => chain.id === chainId) ??
    defineChain({
      id: chainId,
      name: `Chain ${chainId}`,
      nativeCurrency: { name: "Ether", symbol: "ETH", decimals: 18 },
      rpcUrls: { default: { http: [] } },
    })
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

/** What a WalletConnect wallet shows about the page asking to connect. */
export type WalletConnectSettings = { projectId: string; issuerUrl: string };

/**
 * WalletConnect, set up only once someone chooses it: wagmi would otherwise load its provider at
 * page load (setup, and reconnect asking every connector for its provider), which opens a socket
 * to the relay for every visitor.
 */
function onDemandWalletConnect({ projectId, issuerUrl }: WalletConnectSettings): CreateConnectorFn {
  const create = walletConnect({
    projectId,
    // Keyfob draws its own dialog (QR code, deep link), in the page's language and colours.
    showQrModal: false,
    telemetryEnabled: false,
    metadata: { name: "Keyfob", description: "Sign in with Keyfob", url: issuerUrl, icons: [`${issuerUrl}/icon.svg`] },
  });
  return ((config: Parameters<CreateConnectorFn>[0]) => {
    const connector = create(config);
    let chosen = false;
    return {
      ...connector,
      async setup() {},
      async getProvider(parameters?: { chainId?: number }) {
        // wagmi's reconnect skips a connector without a provider.
        return chosen ? connector.getProvider.call(this, parameters) : (undefined as never);
      },
      async isAuthorized() {
        return chosen ? connector.isAuthorized.call(this) : false;
      },
      async connect(parameters?: Parameters<typeof connector.connect>[0]) {
        chosen = true;
        return connector.connect.call(this, parameters);
      },
    };
  }) as CreateConnectorFn;
}

export function Web3Providers({
  chainId,
  walletConnect: wc,
  reconnect = true,
  children,
}: {
  chainId: number;
  walletConnect?: WalletConnectSettings;
  /** Reconnect, at mount, a wallet connected on this site before (off when the person has just chosen one). */
  reconnect?: boolean;
  children: ReactNode;
}) {
  const [state] = useState(() => {
    const chain = chainFor(chainId);
    return {
      queryClient: new QueryClient({ defaultOptions: { mutations: { retry: false } } }),
      config: createConfig({
        chains: [chain],
        // window.ethereum as "Browser wallet"; the wallets that announce themselves (EIP-6963)
        // are added by name and icon.
        connectors: [injected({ shimDisconnect: true }), ...(wc ? [onDemandWalletConnect(wc)] : [])],
        multiInjectedProviderDiscovery: true,
        transports: { [chain.id]: noRpc },
        ssr: true,
      }),
    };
  });
  return (
    <WagmiProvider config={state.config} reconnectOnMount={reconnect}>
      <QueryClientProvider client={state.queryClient}>{children}</QueryClientProvider>
    </WagmiProvider>
  );
}
