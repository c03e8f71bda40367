"use client";
/**
 * Which wallets the page can offer: each browser wallet that announced itself (EIP-6963), by its
 * name and icon; a plain window.ethereum that is none of those ("Browser wallet"); and WalletConnect
 * when it is configured. With one option the wallet button uses it at once; with several it opens
 * this list.
 */
import { useEffect, useState } from "react";
import { useTranslations } from "next-intl";
import { useConnectors, type Connector } from "wagmi";
import { hasBrowserWallet } from "./use-siwe";
import { safeIcon, type WalletChoice } from "./wallet-chooser";

export { WalletChooser, WalletOptionIcon } from "./wallet-chooser";

export type WalletOption = WalletChoice & { connector: Connector };

export function useWalletOptions(): { options: WalletOption[]; browserWallets: number; checked: boolean } {
  const t = useTranslations("wallet");
  const connectors = useConnectors();
  const [plain, setPlain] = useState<{ present: boolean; announced: boolean } | null>(null);
  const announced = connectors.filter((c) => c.type === "injected" && c.id !== "injected");

  // biome-ignore lint/correctness/useExhaustiveDependencies: re-checked when the announced wallets change (their ids), not on every new array
  useEffect(() => {
    // Extensions inject window.ethereum before or shortly after load; a wallet that also announced
    // itself (EIP-6963) is listed once, under its own name.
    let cancelled = false;
    const check = async () => {
      const ethereum = (window as { ethereum?: unknown }).ethereum;
      const providers = await Promise.all(announced.map((c) => c.getProvider().catch(() => undefined)));
      if (!cancelled) setPlain({ present: hasBrowserWallet(), announced: providers.some((p) => p !== undefined && p === ethereum) });
    };
    void check();
    const timer = setTimeout(() => void check(), 600);
    return () => {
      cancelled = true;
      clearTimeout(timer);
    };
  }, [announced.map((c) => c.uid).join(",")]);

  const options: WalletOption[] = announced.map((c) => ({
    key: c.uid,
    kind: "eip6963",
    connector: c,
    name: c.name,
    icon: safeIcon(c.icon),
  }));
  const injected = connectors.find((c) => c.id === "injected");
  if (injected && plain?.present && !plain.announced)
    options.push({ key: injected.uid, kind: "injected", connector: injected, name: t("browserWallet") });
  const browserWallets = options.length;
  const wc = connectors.find((c) => c.id === "walletConnect");
  if (wc) options.push({ key: wc.uid, kind: "walletconnect", connector: wc, name: t("walletConnectName") });
  return { options, browserWallets, checked: plain !== null };
}
