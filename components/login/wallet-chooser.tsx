"use client";
/**
 * The list of wallets to choose from, by name and icon. Apart from wallet-options.tsx (which asks
 * wagmi for the wallets): the login page shows it before wagmi is loaded (wallet-launcher.tsx).
 */
import { useEffect, useRef } from "react";
import { useTranslations } from "next-intl";
import { PhoneIcon, WalletIcon } from "./icons";
import { buttonStyles } from "./ui";

/** A wallet the page can offer: announced (EIP-6963), a plain window.ethereum, or WalletConnect. */
export type WalletChoice = { key: string; kind: "eip6963" | "injected" | "walletconnect"; name: string; icon?: string };

/** An EIP-6963 icon is a data: URI (or https): anything else is not shown. */
export const safeIcon = (icon: string | undefined) =>
  icon && /^(data:image\/(svg\+xml|png|webp|jpeg|gif)[;,]|https:\/\/)/i.test(icon) ? icon : undefined;

export function WalletOptionIcon({ option }: { option: WalletChoice }) {
  if (option.icon) {
    // biome-ignore lint/performance/noImgElement: a wallet's own icon (data: URI or any https host): not for next/image
    return <img src={option.icon} alt="" width={24} height={24} className="size-6 rounded-md object-contain" />;
  }
  return option.kind === "walletconnect" ? (
    <PhoneIcon className="size-5 text-slate-700 dark:text-slate-200" />
  ) : (
    <WalletIcon className="size-5 text-slate-700 dark:text-slate-200" />
  );
}

/** The list of wallets to choose from; focus moves to its first entry when it opens. */
export function WalletChooser<O extends WalletChoice>({
  id,
  options,
  onChoose,
}: {
  id: string;
  options: O[];
  onChoose: (option: O) => void;
}) {
  const t = useTranslations("wallet");
  const first = useRef<HTMLButtonElement>(null);
  useEffect(() => first.current?.focus(), []);
  return (
    // biome-ignore lint/a11y/useSemanticElements: a group of buttons, not form fields: a <fieldset> would bring its border and <legend>
    <div id={id} role="group" aria-labelledby={`${id}-title`} className="rounded-xl border border-slate-200 p-3 dark:border-slate-700">
      <p id={`${id}-title`} className="mb-2 text-center text-xs font-semibold uppercase tracking-wider text-slate-600 dark:text-slate-400">
        {t("choose")}
      </p>
      <ul className="space-y-2">
        {options.map((option, index) => (
          <li key={option.key}>
            <button
              ref={index === 0 ? first : undefined}
              type="button"
              className={`${buttonStyles.option} justify-start`}
              onClick={() => onChoose(option)}
            >
              <span className="flex size-6 items-center justify-center">
                <WalletOptionIcon option={option} />
              </span>
              <span className="flex flex-col items-start text-left">
                <span>{option.name}</span>
                {option.kind === "walletconnect" && (
                  <span className="text-xs font-normal text-slate-600 dark:text-slate-300">{t("walletConnectHint")}</span>
                )}
              </span>
            </button>
          </li>
        ))}
      </ul>
    </div>
  );
}
