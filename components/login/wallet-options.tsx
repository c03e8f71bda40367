"use client";
/**
 * Which wallets the page can offer: each browser wallet that announced itself (EIP-6963), by its
 * name and icon; a plain window.ethereum that is none of those ("Browser wallet"); and WalletConnect
 * when it is configured. With one option the wallet button uses it at once; with several it opens
 * this list.
 */
import { useEffect, useRef, useState } from "react";
import { useTranslations } from "next-intl";
import { useConnectors, type Connector } from "wagmi";
import { PhoneIcon, WalletIcon } from "./icons";
import { buttonStyles } from "./ui";
import { hasBrowserWallet } from "./use-siwe";

export type WalletOption = { key: string; kind: "eip6963" | "injected" | "walletconnect"; connector: Connector; name: string; icon?: string };

/** An EIP-6963 icon is a data: URI (or https): anything else is not shown. */
const safeIcon = (icon: string | undefined) => (icon && /^(data:image\/(svg\+xml|png|webp|jpeg|gif)[;,]|https:\/\/)/i.test(icon) ? icon : undefined);

export function useWalletOptions(): { options: WalletOption[]; browserWallets: number; checked: boolean } {
  const t = useTranslations("wallet");
  const connectors = useConnectors();
  const [plain, setPlain] = useState<{ present: boolean; announced: boolean } | null>(null);
  const announced = connectors.filter((c) => c.type === "injected" && c.id !== "injected");

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
    // Re-checked when the announced wallets change.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [announced.map((c) => c.uid).join(",")]);

  const options: WalletOption[] = announced.map((c) => ({ key: c.uid, kind: "eip6963", connector: c, name: c.name, icon: safeIcon(c.icon) }));
  const injected = connectors.find((c) => c.id === "injected");
  if (injected && plain?.present && !plain.announced) options.push({ key: injected.uid, kind: "injected", connector: injected, name: t("browserWallet") });
  const browserWallets = options.length;
  const wc = connectors.find((c) => c.id === "walletConnect");
  if (wc) options.push({ key: wc.uid, kind: "walletconnect", connector: wc, name: t("walletConnectName") });
  return { options, browserWallets, checked: plain !== null };
}

export function WalletOptionIcon({ option }: { option: WalletOption }) {
  if (option.icon) {
    // eslint-disable-next-line @next/next/no-img-element -- a wallet's own icon (data: URI)
    return <img src={option.icon} alt="" width={24} height={24} className="size-6 rounded-md object-contain" />;
  }
  return option.kind === "walletconnect" ? <PhoneIcon className="size-5 text-slate-700 dark:text-slate-200" /> : <WalletIcon className="size-5 text-slate-700 dark:text-slate-200" />;
}

/** The list of wallets to choose from; focus moves to its first entry when it opens. */
export function WalletChooser({ id, options, onChoose }: { id: string; options: WalletOption[]; onChoose: (option: WalletOption) => void }) {
  const t = useTranslations("wallet");
  const first = useRef<HTMLButtonElement>(null);
  useEffect(() => first.current?.focus(), []);
  return (
    <div id={id} role="group" aria-labelledby={`${id}-title`} className="rounded-xl border border-slate-200 p-3 dark:border-slate-700">
      <p id={`${id}-title`} className="mb-2 text-center text-xs font-semibold uppercase tracking-wider text-slate-600 dark:text-slate-400">
        {t("choose")}
      </p>
      <ul className="space-y-2">
        {options.map((option, index) => (
          <li key={option.key}>
            <button ref={index === 0 ? first : undefined} type="button" className={`${buttonStyles.option} justify-start`} onClick={() => onChoose(option)}>
              <span className="flex size-6 items-center justify-center">
                <WalletOptionIcon option={option} />
              </span>
              <span className="flex flex-col items-start text-left">
                <span>{option.name}</span>
                {option.kind === "walletconnect" && <span className="text-xs font-normal text-slate-600 dark:text-slate-300">{t("walletConnectHint")}</span>}
              </span>
            </button>
          </li>
        ))}
      </ul>
    </div>
  );
}
