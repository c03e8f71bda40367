/**
 * Fake EIP-1193 browser wallets for Playwright, with their keys kept in Node (viem's
 * privateKeyToAccount) and reached through page.exposeFunction. Each answers what wagmi's injected
 * connectors ask (wallet_requestPermissions, eth_requestAccounts, eth_accounts, eth_chainId,
 * personal_sign, wallet_switchEthereumChain) and can refuse like a person would (4001).
 *
 * - installWallet: a plain `window.ethereum` (an extension that does not announce itself).
 * - installAnnouncedWallets: several wallets that announce themselves by EIP-6963 events
 *   (eip6963:announceProvider, again on every eip6963:requestProvider), with no window.ethereum.
 */
import type { Page } from "@playwright/test";
import type { Hex } from "viem";
import { privateKeyToAccount } from "viem/accounts";

export type FakeWallet = {
  address: `0x${string}`;
  /** What the page asked the wallet, in order. */
  requests: string[];
  /** Refuse the next signature requests (EIP-1193 error 4001). */
  rejectSignatures(reject: boolean): void;
  /** Refuse the next network switches (4001). */
  rejectSwitches(reject: boolean): void;
};

export type AnnouncedWallet = { name: string; rdns: string; privateKey: Hex; icon?: string };

type Installed = { tag: string; address: string; chainId: number; announce?: { name: string; rdns: string; icon: string; uuid: string } };

/** An SVG icon as a data URI (what EIP-6963 wallets announce). */
export const walletIcon = (color: string) =>
  `data:image/svg+xml,${encodeURIComponent(`<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="8" fill="${color}"/></svg>`)}`;

/** The wallets' keys in Node; one pair of exposed functions per page serves them all. */
async function expose(page: Page, wallets: { tag: string; privateKey: Hex; chainId: number }[]): Promise<Record<string, FakeWallet>> {
  const state = Object.fromEntries(
    wallets.map(({ tag, privateKey }) => {
      const account = privateKeyToAccount(privateKey);
      const wallet = { account, requests: [] as string[], reject: false, rejectSwitch: false };
      return [tag, wallet];
    }),
  );
  await page.exposeFunction("__fakeWalletSign", async (tag: string, message: Hex, from: string) => {
    const { account } = state[tag];
    if (from.toLowerCase() !== account.address.toLowerCase()) throw new Error(`asked to sign for ${from}`);
    return account.signMessage({ message: { raw: message } });
  });
  await page.exposeFunction("__fakeWalletLog", async (tag: string, method: string) => {
    state[tag].requests.push(method);
    return (method === "personal_sign" && state[tag].reject) || (method === "wallet_switchEthereumChain" && state[tag].rejectSwitch);
  });
  return Object.fromEntries(
    Object.entries(state).map(([tag, wallet]) => [
      tag,
      {
        address: wallet.account.address,
        requests: wallet.requests,
        rejectSignatures(value: boolean) {
          wallet.reject = value;
        },
        rejectSwitches(value: boolean) {
          wallet.rejectSwitch = value;
        },
      },
    ]),
  );
}

/** The page side: one EIP-1193 provider per wallet, as window.ethereum and/or announced by EIP-6963. */
function pageScript({ wallets, asWindowEthereum }: { wallets: Installed[]; asWindowEthereum: boolean }) {
  const w = window as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
  const refuse = () => Object.assign(new Error("User rejected the request."), { code: 4001 });
  const providers = wallets.map(({ tag, address, chainId }) => {
    const listeners: Record<string, ((...args: unknown[]) => void)[]> = {};
    const emit = (event: string, value: unknown) => {
      for (const listener of listeners[event] ?? []) listener(value);
    };
    let connected = false;
    let chain = chainId;
    return {
      isMetaMask: false,
      async request({ method, params }: { method: string; params?: unknown[] }) {
        const refused = await w.__fakeWalletLog(tag, method);
        switch (method) {
          case "eth_chainId":
            return `0x${chain.toString(16)}`;
          case "eth_accounts":
            return connected ? [address] : [];
          case "eth_requestAccounts":
          case "wallet_requestPermissions":
            connected = true;
            emit("connect", { chainId: `0x${chain.toString(16)}` });
            return method === "eth_requestAccounts" ? [address] : [{ parentCapability: "eth_accounts" }];
          case "wallet_revokePermissions":
            connected = false;
            return null;
          case "wallet_switchEthereumChain": {
            if (refused) throw refuse();
            chain = parseInt((params as [{ chainId: string }])[0].chainId, 16);
            emit("chainChanged", `0x${chain.toString(16)}`);
            return null;
          }
          case "personal_sign":
            if (refused) throw refuse();
            return w.__fakeWalletSign(tag, params?.[0], params?.[1]);
          default:
            throw Object.assign(new Error(`fake wallet: ${method} is not supported`), { code: 4200 });
        }
      },
      on(event: string, listener: (...args: unknown[]) => void) {
        listeners[event] ??= [];
        listeners[event].push(listener);
      },
      removeListener(event: string, listener: (...args: unknown[]) => void) {
        listeners[event] = (listeners[event] ?? []).filter((l) => l !== listener);
      },
    };
  });
  if (asWindowEthereum) (window as unknown as { ethereum: unknown }).ethereum = providers[0];
  const announce = () =>
    wallets.forEach(({ announce: info }, i) => {
      if (info)
        window.dispatchEvent(new CustomEvent("eip6963:announceProvider", { detail: Object.freeze({ info, provider: providers[i] }) }));
    });
  window.addEventListener("eip6963:requestProvider", announce);
  announce();
}

/** A plain window.ethereum wallet. */
export async function installWallet(page: Page, options: { privateKey: Hex; chainId: number }): Promise<FakeWallet> {
  const { wallet } = await expose(page, [{ tag: "wallet", privateKey: options.privateKey, chainId: options.chainId }]);
  await page.addInitScript(pageScript, {
    wallets: [{ tag: "wallet", address: wallet.address, chainId: options.chainId }],
    asWindowEthereum: true,
  });
  return wallet;
}

/** Several wallets that announce themselves (EIP-6963) and set no window.ethereum; by name, in order. */
export async function installAnnouncedWallets(page: Page, chainId: number, wallets: AnnouncedWallet[]): Promise<FakeWallet[]> {
  const installed = await expose(
    page,
    wallets.map((w) => ({ tag: w.rdns, privateKey: w.privateKey, chainId })),
  );
  await page.addInitScript(pageScript, {
    wallets: wallets.map((w, i) => ({
      tag: w.rdns,
      address: installed[w.rdns].address,
      chainId,
      announce: {
        name: w.name,
        rdns: w.rdns,
        icon: w.icon ?? walletIcon(["#f97316", "#0ea5e9", "#22c55e"][i % 3]),
        uuid: `00000000-0000-4000-8000-00000000000${i}`,
      },
    })),
    asWindowEthereum: false,
  });
  return wallets.map((w) => installed[w.rdns]);
}
