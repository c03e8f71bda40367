"use client";
/**
 * "Link wallet" on /account: the wallet (chosen as on the login page) signs an EIP-4361 message
 * carrying the account's link nonce; then the page's list of ways in refreshes. Refused for a
 * login that is no longer recent, it offers "Sign in again".
 */
import { useRouter } from "next/navigation";
import { useCallback, useState } from "react";
import { useTranslations } from "next-intl";
import { SIWE_PURPOSE } from "@/lib/siwe/purpose";
import { Spinner, WalletIcon } from "../login/icons";
import { isFinal, type LoginErrorKey } from "../login/login-result";
import { buttonStyles, Notice, ShortAddress } from "../login/ui";
import type { SiweStep } from "../login/use-siwe";
import { useWalletButton } from "../login/use-wallet-button";
import { WalletConnectDialog } from "../login/walletconnect-dialog";
import { WalletChooser } from "../login/wallet-options";
import { WalletProblem } from "../login/wallet-problem";
import { WrongChainNotice } from "../login/wrong-chain-notice";
import { chainName } from "../providers";
import { SignInAgain } from "./sign-in-again";

type Props = {
  accountId: string;
  nonce: string;
  issuerUrl: string;
  chainId: number;
  serverTime: number;
  link: (message: string, signature: string) => Promise<{ error: LoginErrorKey; restart?: boolean; seconds?: number } | { linked: string }>;
};

export function LinkWallet({ accountId, nonce, issuerUrl, chainId, serverTime, link }: Props) {
  const t = useTranslations("account");
  const wallet = useTranslations("wallet");
  const errors = useTranslations("loginErrors");
  const titles = useTranslations("loginErrorTitles");
  const [linked, setLinked] = useState<string | null>(null);
  const [loginNotRecent, setLoginNotRecent] = useState(false);
  const router = useRouter();
  const chainLabel = chainName(chainId);
  const submit = useCallback(
    async (text: string, signature: string) => {
      const result = await link(text, signature);
      if ("error" in result) {
        const { error } = result;
        setLoginNotRecent(error === "loginNotRecent");
        // A wallet of another account is no failure to retry: it says so, with no "Try again".
        return {
          error: errors(error, { seconds: result.seconds ?? 60 }),
          restart: result.restart,
          ...(isFinal(error) && { title: titles(error), final: true }),
        };
      }
      setLinked(result.linked);
      router.refresh();
    },
    [errors, link, router, titles],
  );
  const { siwe, options, busy, choosing, choose, press, walletConnect, button, walletConnectDialog } = useWalletButton({
    purpose: SIWE_PURPOSE.linkWallet,
    chainId,
    issuerUrl,
    nonce,
    statement: t("linkStatement", { account: accountId }),
    serverTime,
    submit,
  });
  const { step, problem, address } = siwe;
  const progress: Partial<Record<SiweStep, string>> = {
    connecting: walletConnect ? wallet("walletConnect.waiting") : wallet("progress.connecting"),
    switching: wallet("progress.switching", { chain: chainLabel }),
    signing: wallet("progress.signing"),
    submitting: t("linking"),
  };

  if (linked) {
    return (
      <Notice tone="info" title={t("linkedTitle")}>
        {t.rich("linked", { address: () => <ShortAddress address={linked} /> })}
      </Notice>
    );
  }
  return (
    <div className="space-y-3">
      <button
        ref={button}
        id="link-wallet-button"
        type="button"
        className={`${buttonStyles.primary} w-full`}
        onClick={press}
        disabled={busy || step === "wrong-chain"}
        aria-expanded={!address && options.length > 1 ? choosing : undefined}
        aria-controls={!address && options.length > 1 ? "link-wallet-chooser" : undefined}
      >
        {busy ? <Spinner className="size-4" /> : <WalletIcon className="size-4" />}
        {address && step !== "connecting" ? (
          <span>{t.rich("linkAddress", { address: () => <ShortAddress address={address} /> })}</span>
        ) : (
          <span>{t("link")}</span>
        )}
      </button>
      {choosing && !busy && !address && <WalletChooser id="link-wallet-chooser" options={options} onChoose={choose} />}
      <div aria-live="polite" className="text-center text-sm text-slate-700 dark:text-slate-200">
        {busy ? progress[step] : ""}
      </div>
      <WrongChainNotice siwe={siwe} chainLabel={chainLabel}>
        {wallet("wrongChain.body", { chain: chainLabel })}
      </WrongChainNotice>
      <WalletProblem
        problem={problem}
        step={step}
        onRetry={() => void siwe.retry()}
        restart={
          loginNotRecent ? (
            <SignInAgain />
          ) : (
            <button type="button" className={buttonStyles.primary} onClick={() => window.location.reload()}>
              {t("reload")}
            </button>
          )
        }
      />
      {address && !busy && (
        <p className="text-center">
          <button type="button" className={buttonStyles.quiet} onClick={siwe.forgetWallet}>
            {wallet("useDifferent")}
          </button>
        </p>
      )}
      {walletConnectDialog && <WalletConnectDialog {...walletConnectDialog} />}
    </div>
  );
}
