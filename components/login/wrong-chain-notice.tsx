"use client";
import { useEffect, useRef, type ReactNode } from "react";
import { useTranslations } from "next-intl";
import { chainName } from "../providers";
import { buttonStyles, Notice } from "./ui";
import type { useSiwe } from "./use-siwe";

/**
 * Shown while the wallet is on another chain than the message's: switch first, or sign anyway.
 * The one notice for the wrong network: a refused or impossible switch is said inside it, not in
 * a second notice. It takes focus when it appears (the wallet button is disabled meanwhile).
 */
export function WrongChainNotice({
  siwe,
  chainLabel,
  children,
}: {
  siwe: ReturnType<typeof useSiwe>;
  chainLabel: string;
  children: ReactNode;
}) {
  const t = useTranslations("wallet.wrongChain");
  const notice = useRef<HTMLDivElement>(null);
  const shown = siwe.step === "wrong-chain" && siwe.walletChainId !== undefined;
  useEffect(() => {
    if (shown) notice.current?.focus();
  }, [shown]);
  if (!shown) return null;
  const kind = siwe.problem?.kind;
  return (
    <Notice
      ref={notice}
      tone="warning"
      testId="wrong-chain"
      title={t("title", { chain: chainName(siwe.walletChainId!) })}
      actions={
        <>
          {kind !== "unknown-chain" && (
            <button type="button" className={buttonStyles.primary} onClick={siwe.switchAndSign}>
              {t("switch", { chain: chainLabel })}
            </button>
          )}
          <button
            type="button"
            className={kind === "unknown-chain" ? buttonStyles.primary : buttonStyles.secondary}
            onClick={siwe.signAnyway}
          >
            {t("anyway")}
          </button>
        </>
      }
    >
      {kind === "rejected-switch" && <strong className="block font-semibold">{t("notSwitched")}</strong>}
      {kind === "unknown-chain" && <strong className="block font-semibold">{t("cannotSwitch", { chain: chainLabel })}</strong>}
      {children}
    </Notice>
  );
}
