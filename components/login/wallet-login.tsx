"use client";
/**
 * "Continue with a wallet": connects the browser wallet (wagmi, injected connector), has it sign
 * the EIP-4361 message for this login (Keyfob's domain and URI, CHAIN_ID, the interaction's
 * single-use nonce), and hands it to the server action, which redirects to the application.
 */
import { useCallback } from "react";
import { SIWE_PURPOSE } from "@/lib/siwe/purpose";
import { chainName } from "../providers";
import { Spinner, WalletIcon } from "./icons";
import { buttonStyles, Notice, ShortAddress } from "./ui";
import { useSiwe, walletProgress, type SubmitResult } from "./use-siwe";
import { WrongChainNotice } from "./wrong-chain-notice";

export type WalletLoginProps = {
  interactionId: string;
  walletNonce: string;
  clientName: string;
  issuerUrl: string;
  chainId: number;
  /** Milliseconds to add to this browser's clock to get the server's (messages carry an issue time). */
  serverTime: number;
  /** Where "Start again" goes: the same authorization request, as a new login. */
  restartHref: string;
  /** The other ways in offered on the page ("Google or Apple"), named when no wallet is found. */
  otherOptions?: string;
  login: (interactionId: string, message: string, signature: string) => Promise<SubmitResult>;
};

export function WalletLogin({ interactionId, walletNonce, clientName, issuerUrl, chainId, serverTime, restartHref, otherOptions, login }: WalletLoginProps) {
  const chainLabel = chainName(chainId);
  const statement = `Sign in to ${clientName.replace(/[\r\n]+/g, " ")} with Keyfob. This does not send a transaction or cost a fee.`;
  const submit = useCallback((text: string, signature: string) => login(interactionId, text, signature), [interactionId, login]);
  const siwe = useSiwe({ purpose: SIWE_PURPOSE.login, chainId, chainLabel, issuerUrl, nonce: walletNonce, statement, serverTime, submit });
  const { step, problem, address } = siwe;
  const busy = step === "connecting" || step === "switching" || step === "signing" || step === "submitting" || step === "done";

  const progress = {
    ...walletProgress(chainLabel),
    submitting: "Verifying your signature…",
    done: `Signed in. Returning to ${clientName}…`,
  } as Partial<Record<typeof step, string>>;

  return (
    <div className="space-y-3">
      <button type="button" className={buttonStyles.option} onClick={siwe.start} disabled={busy || step === "wrong-chain"} aria-describedby="wallet-help">
        <span className="flex size-5 items-center justify-center text-slate-700">{busy ? <Spinner className="size-5" /> : <WalletIcon />}</span>
        {address && step !== "connecting" ? (
          <span>
            Sign in with <ShortAddress address={address} />
          </span>
        ) : (
          <span>Continue with a wallet</span>
        )}
      </button>

      <p id="wallet-help" className="text-center text-xs leading-relaxed text-slate-500">
        Your wallet signs a sign-in message: no transaction, no fee.
      </p>

      <div aria-live="polite" className="sr-only">
        {busy ? progress[step] : ""}
      </div>
      {busy && (
        <p className="flex items-center justify-center gap-2 text-sm text-slate-700" aria-hidden="true">
          {progress[step]}
        </p>
      )}

      <WrongChainNotice siwe={siwe} chainLabel={chainLabel}>
        This sign-in is for {chainLabel}. Switch networks, or sign anyway: the message names {chainLabel}, and signing
        sends no transaction. Smart-contract wallets should switch.
      </WrongChainNotice>

      {problem && (
        <Notice
          tone={problem.kind === "no-wallet" ? "info" : "error"}
          title={problem.title}
          actions={
            problem.restart ? (
              <a className={buttonStyles.primary} href={restartHref}>
                Start again
              </a>
            ) : undefined
          }
        >
          {problem.message}
          {problem.kind === "no-wallet" && otherOptions ? ` You can also continue with ${otherOptions} above.` : null}
        </Notice>
      )}

      {!problem && siwe.walletDetected === false && !address && (
        <p className="text-center text-xs text-slate-500">No browser wallet detected in this browser.</p>
      )}

      {address && !busy && (
        <p className="text-center">
          <button type="button" className={buttonStyles.quiet} onClick={siwe.forgetWallet}>
            Use a different wallet
          </button>
        </p>
      )}
    </div>
  );
}
