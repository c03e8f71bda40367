"use client";
/**
 * What went wrong with a wallet, in the page's language. The notice takes focus when it appears, so
 * keyboard and screen-reader users land on it, and offers the way on: "Try again", "Start again"
 * (when the login itself is over), or where to get a wallet; none when trying again cannot help.
 */
import { useEffect, useRef, type ReactNode } from "react";
import { useTranslations } from "next-intl";
import { ExternalIcon } from "./icons";
import { buttonStyles, Notice } from "./ui";
import type { SiweProblem, SiweStep } from "./use-siwe";

export function GetWalletLink({ className = buttonStyles.link }: { className?: string }) {
  const t = useTranslations("wallet");
  return (
    <a className={`${className} inline-flex items-center gap-1`} href={t("getWalletUrl")} target="_blank" rel="noopener noreferrer">
      {t("getWallet")}
      <ExternalIcon />
      <span className="sr-only">{t("newTab")}</span>
    </a>
  );
}

export function WalletProblem({
  problem,
  step,
  onRetry,
  restart,
  otherOptions,
}: {
  problem: SiweProblem | null;
  step: SiweStep;
  onRetry: () => void;
  /** Where "Start again" leads (the login page); without it a server-side "restart" offers a reload. */
  restart?: ReactNode;
  /** The page's other ways in ("Google or Apple"), named when no wallet is found. */
  otherOptions?: string;
}) {
  const t = useTranslations("wallet.problems");
  const common = useTranslations("common");
  const notice = useRef<HTMLDivElement>(null);
  // The wrong-network notice speaks for a refused or impossible switch.
  const shown =
    problem && step !== "wrong-chain" && problem.kind !== "rejected-switch" && problem.kind !== "unknown-chain" ? problem : null;
  useEffect(() => {
    if (shown) notice.current?.focus();
  }, [shown]);
  if (!shown) return null;

  const text: Record<string, [string, ReactNode]> = {
    "no-wallet": [
      t("noWalletTitle"),
      <>
        {t("noWallet")}
        {otherOptions ? ` ${t("noWalletAlternatives", { options: otherOptions })}` : null}
      </>,
    ],
    "rejected-connection": [t("rejectedConnectionTitle"), t("rejectedConnection")],
    "rejected-signature": [t("rejectedSignatureTitle"), t("rejectedSignature")],
    pending: [t("pendingTitle"), t("pending")],
    wallet: [
      t("walletTitle"),
      <>
        {t("wallet")}
        {shown.detail ? <span className="mt-1 block text-xs opacity-90">{t("walletSaid", { detail: shown.detail })}</span> : null}
      </>,
    ],
    server: [shown.title ?? t("serverTitle"), shown.detail],
  };
  const [title, message] = text[shown.kind] ?? text.wallet;
  const tryAgain = (
    <button type="button" className={buttonStyles.primary} onClick={onRetry}>
      {common("tryAgain")}
    </button>
  );
  return (
    <Notice
      ref={notice}
      tone={shown.kind === "no-wallet" ? "info" : "error"}
      title={title}
      testId="wallet-problem"
      actions={
        shown.restart ? (
          restart
        ) : shown.final ? undefined : shown.kind === "no-wallet" ? (
          <>
            <GetWalletLink className={buttonStyles.secondary} />
            {tryAgain}
          </>
        ) : (
          tryAgain
        )
      }
    >
      {message}
    </Notice>
  );
}
