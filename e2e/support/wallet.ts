/**
 * A fake EIP-1193 browser wallet for Playwright: `window.ethereum` in the page, with the key kept in
 * Node (viem's privateKeyToAccount) and reached through page.exposeFunction. It answers what wagmi's
 * injected connector asks (wallet_requestPermissions, eth_requestAccounts, eth_accounts,
 * eth_chainId, personal_sign, wallet_switchEthereumChain) and can refuse like a person would (4001).
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
};

export async function installWallet(page: Page, options: { privateKey: Hex; chainId: number }): Promise<FakeWallet> {
  const account = privateKeyToAccount(options.privateKey);
  const requests: string[] = [];
  let reject = false;
  await page.exposeFunction("__fakeWalletSign", async (message: Hex, from: string) => {
    if (from.toLowerCase() !== account.address.toLowerCase()) throw new Error(`asked to sign for ${from}`);
    return account.signMessage({ message: { raw: message } });
  });
  await page.exposeFunction("__fakeWalletLog", async (method: string) => {
    requests.push(method);
    return method === "personal_sign" && reject;
  });
  await page.addInitScript(
    ({ address, chainId }) => {
      const listeners: Record<string, ((...args: unknown[]) => void)[]> = {};
      const emit = (event: string, value: unknown) => (listeners[event] ?? []).forEach((listener) => listener(value));
      let connected = false;
      let chain = chainId;
      const refuse = () => Object.assign(new Error("User rejected the request."), { code: 4001 });
      const w = window as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
      (window as unknown as { ethereum: unknown }).ethereum = {
        isMetaMask: false,
        async request({ method, params }: { method: string; params?: unknown[] }) {
          const refused = await w.__fakeWalletLog(method);
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
              chain = parseInt((params?.[0] as { chainId: string }).chainId, 16);
              emit("chainChanged", `0x${chain.toString(16)}`);
              return null;
            }
            case "personal_sign":
              if (refused) throw refuse();
              return w.__fakeWalletSign(params?.[0], params?.[1]);
            default:
              throw Object.assign(new Error(`fake wallet: ${method} is not supported`), { code: 4200 });
          }
        },
        on(event: string, listener: (...args: unknown[]) => void) {
          (listeners[event] ??= []).push(listener);
        },
        removeListener(event: string, listener: (...args: unknown[]) => void) {
          listeners[event] = (listeners[event] ?? []).filter((l) => l !== listener);
        },
      };
    },
    { address: account.address, chainId: options.chainId },
  );
  return {
    address: account.address,
    requests,
    rejectSignatures(value) {
      reject = value;
    },
  };
}
