"use client";
/**
 * "Continue with a wallet": lets the person pick a wallet (browser wallets found by EIP-6963 by
 * name and icon, a plain window.ethereum, WalletConnect for phone wallets), has it sign the EIP-4361
 * message for this login (Keyfob's domain and URI, CHAIN_ID, the interaction's single-use nonce),
 * and hands it to the server action, which redirects to the application.
 */
import { useCallback, useEffect, useRef, useState } from "react";
import { useRouter } from "next/navigation";
import { useTranslations } from "next-intl";
import { useConnection, useConnectors } from "wagmi";
import { SIWE_PURPOSE } from "@/lib/siwe/purpose";
import { chainName } from "../providers";
import { Spinner, WalletIcon } from "./icons";
import { buttonStyles, LastUsedBadge, ShortAddress } from "./ui";
import type { SiweStep } from "./use-siwe";
import { useWalletButton } from "./use-wallet-button";
import type { WalletChoice } from "./wallet-chooser";
import { WalletConnectDialog } from "./walletconnect-dialog";
import { WalletChooser } from "./wallet-options";
import { GetWalletLink, WalletProblem } from "./wallet-problem";
import { WrongChainNotice } from "./wrong-chain-notice";
import { isFinal, loginIsOver, type LoginErrorKey, type LoginResult } from "./login-result";

export type WalletLoginProps = {
  interactionId: string;
  walletNonce: string;
  clientName: string;
  issuerUrl: string;
  chainId: number;
  /** The server's clock when the page was rendered (ms): the message carries the server's time. */
  serverTime: number;
  /** Where "Start again" goes: the same authorization request, as a new login. */
  restartHref: string;
  /** The other ways in offered on the page ("Google or Apple"), named when no wallet is found. */
  otherOptions?: string;
  login: (interactionId: string, message: string, signature: string) => Promise<LoginResult>;
  /** Whether this browser signed in with a wallet last time: the button says so. */
  lastUsed?: boolean;
  /** Whether the login is still open, asked before the wallet is asked to sign. */
  stillOpen: (interactionId: string) => Promise<LoginResult>;
};

/**
 * What the person already did before this component was loaded (wallet-launcher.tsx): pressed the
 * wallet button with no wallet (no kind) or one, or chose one from the list.
 */
export type WalletStart = { kind?: WalletChoice["kind"]; rdns?: string };

export function WalletLogin({
  interactionId,
  walletNonce,
  clientName,
  issuerUrl,
  chainId,
  serverTime,
  restartHref,
  otherOptions,
  login,
  stillOpen,
  lastUsed,
  start,
}: WalletLoginProps & { start?: WalletStart }) {
  const t = useTranslations("wallet");
  const errors = useTranslations("loginErrors");
  const titles = useTranslations("loginErrorTitles");
  const common = useTranslations("common");
  const chainLabel = chainName(chainId);
  const statement = t("statement", { client: clientName.replace(/[\r\n]+/g, " ") });
  const router = useRouter();
  /** A refusal in the page's words; a login that is over turns the page into its ended state. */
  const refusal = useCallback(
    (result: LoginResult) => {
      if (!result?.error) return undefined;
      if (loginIsOver(result)) router.refresh();
      const error = result.error as LoginErrorKey;
      return {
        error: errors(error, { seconds: result.seconds ?? 60 }),
        restart: result.restart,
        ...(isFinal(error) && { title: titles(error), final: true }),
      };
    },
    [errors, router, titles],
  );
  const submit = useCallback(
    async (text: string, signature: string) => refusal(await login(interactionId, text, signature)),
    [interactionId, login, refusal],
  );
  const check = useCallback(async () => refusal(await stillOpen(interactionId)), [interactionId, refusal, stillOpen]);
  const { siwe, options, browserWallets, checked, busy, choosing, choose, press, walletConnect, button, walletConnectDialog } =
    useWalletButton({
      purpose: SIWE_PURPOSE.login,
      chainId,
      issuerUrl,
      nonce: walletNonce,
      statement,
      serverTime,
      submit,
      check,
    });
  const { step, problem, address } = siwe;

  const progress: Partial<Record<SiweStep, string>> = {
    connecting: walletConnect ? t("walletConnect.waiting") : t("progress.connecting"),
    switching: t("progress.switching", { chain: chainLabel }),
    signing: t("progress.signing"),
    submitting: t("progress.submitting"),
    done: t("progress.done", { client: clientName }),
  };

  // `start`: carried out once wagmi is set up. WagmiProvider sets up in an effect that runs after
  // this component's, and finishes it in promise callbacks (its stored state, the announced
  // wallets, a reconnect): a timer's turn comes after them.
  const pendingStart = useRef(start);
  const [wagmiReady, setWagmiReady] = useState(false);
  useEffect(() => {
    if (!pendingStart.current) return;
    const timer = setTimeout(() => setWagmiReady(true), 0);
    return () => clearTimeout(timer);
  }, []);
  const connection = useConnection();
  const connectors = useConnectors();
  const settled = wagmiReady && connection.status !== "connecting" && connection.status !== "reconnecting";
  // biome-ignore lint/correctness/useExhaustiveDependencies: button is a ref, read when the effect runs
  useEffect(() => {
    const wanted = pendingStart.current;
    if (!wanted || !settled) return;
    const id =
      wanted.kind === "eip6963"
        ? wanted.rdns
        : wanted.kind === "injected"
          ? "injected"
          : wanted.kind === "walletconnect"
            ? "walletConnect"
            : undefined;
    const connector = connectors.find((c) => c.id === id);
    if (id && !connector) return; // an announced wallet is added when it answers wagmi's request
    pendingStart.current = undefined;
    // The launcher's button, which had focus, is gone.
    if (!document.activeElement || document.activeElement === document.body) button.current?.focus();
    void siwe.start(connector);
  }, [connectors, settled, siwe]);
  // biome-ignore lint/correctness/useExhaustiveDependencies: once, when wagmi is set up (button is a ref; press as it is then)
  useEffect(() => {
    if (!settled || !pendingStart.current) return;
    // The chosen wallet did not announce itself to wagmi: the person chooses again.
    const timer = setTimeout(() => {
      if (!pendingStart.current) return;
      pendingStart.current = undefined;
      button.current?.focus();
      press();
    }, 3000);
    return () => clearTimeout(timer);
  }, [settled]);

  return (
    <div className="space-y-3">
      <button
        ref={button}
        id="wallet-button"
        type="button"
        className={buttonStyles.option}
        onClick={press}
        disabled={busy || step === "wrong-chain"}
        aria-describedby="wallet-help"
        aria-expanded={!address && options.length > 1 ? choosing : undefined}
        aria-controls={!address && options.length > 1 ? "wallet-chooser" : undefined}
      >
        <span className="flex size-5 items-center justify-center text-slate-700 dark:text-slate-200">
          {busy ? <Spinner className="size-5" /> : <WalletIcon />}
        </span>
        {address && step !== "connecting" ? (
          <span>{t.rich("signInWith", { address: () => <ShortAddress address={address} /> })}</span>
        ) : (
          <span>{t("continue")}</span>
        )}
        {lastUsed && <LastUsedBadge label={common("lastUsed")} />}
      </button>

      {choosing && !busy && !address && <WalletChooser id="wallet-chooser" options={options} onChoose={choose} />}

      <p id="wallet-help" className="text-center text-xs leading-relaxed text-slate-600 dark:text-slate-300">
        {t("help")}
      </p>

      <div aria-live="polite" className="sr-only">
        {busy ? progress[step] : ""}
      </div>
      {busy && (
        <p className="flex items-center justify-center gap-2 text-sm text-slate-700 dark:text-slate-200" aria-hidden="true">
          {progress[step]}
        </p>
      )}

      <WrongChainNotice siwe={siwe} chainLabel={chainLabel}>
        {t("wrongChain.body", { chain: chainLabel })}
      </WrongChainNotice>

      <WalletProblem
        problem={problem}
        step={step}
        onRetry={() => void siwe.retry()}
        otherOptions={otherOptions}
        restart={
          <a className={buttonStyles.primary} href={restartHref}>
            {common("startAgain")}
          </a>
        }
      />

      {!problem && checked && browserWallets === 0 && !address && (
        <p className="text-center text-xs text-slate-600 dark:text-slate-300" data-testid="no-wallet-hint">
          {options.length > 0 ? t("detectedNonePhone") : t("detectedNone")} <GetWalletLink className={`${buttonStyles.link} text-xs`} />
        </p>
      )}

      {address && !busy && (
        <p className="text-center">
          <button type="button" className={buttonStyles.quiet} onClick={siwe.forgetWallet}>
            {t("useDifferent")}
          </button>
        </p>
      )}

      {walletConnectDialog && <WalletConnectDialog {...walletConnectDialog} />}
    </div>
  );
}
