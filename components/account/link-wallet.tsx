"use client";
/** "Link wallet" on /account: the wallet signs an EIP-4361 message carrying the account's link nonce. */
import { useCallback, useState } from "react";
import { SIWE_PURPOSE } from "@/lib/siwe/purpose";
import { Spinner, WalletIcon } from "../login/icons";
import { buttonStyles, Notice, ShortAddress } from "../login/ui";
import { useSiwe, walletProgress } from "../login/use-siwe";
import { WrongChainNotice } from "../login/wrong-chain-notice";
import { chainName } from "../providers";

type Props = {
  accountId: string;
  nonce: string;
  issuerUrl: string;
  chainId: number;
  serverTime: number;
  link: (message: string, signature: string) => Promise<{ error: string } | { linked: string }>;
};

export function LinkWallet({ accountId, nonce, issuerUrl, chainId, serverTime, link }: Props) {
  const [linked, setLinked] = useState<string | null>(null);
  const chainLabel = chainName(chainId);
  const statement = `Link this wallet to the Keyfob account ${accountId}. This does not send a transaction or cost a fee.`;
  const submit = useCallback(
    async (text: string, signature: string) => {
      const result = await link(text, signature);
      if ("error" in result) return { error: result.error, restart: /expired/.test(result.error) };
      setLinked(result.linked);
    },
    [link],
  );
  const siwe = useSiwe({ purpose: SIWE_PURPOSE.linkWallet, chainId, chainLabel, issuerUrl, nonce, statement, serverTime, submit });
  const { step, problem, address } = siwe;
  const busy = step === "connecting" || step === "switching" || step === "signing" || step === "submitting";
  const progress: Partial<Record<typeof step, string>> = { ...walletProgress(chainLabel), submitting: "Linking…" };

  if (linked) {
    return (
      <Notice tone="info" title="Wallet linked">
        <ShortAddress address={linked} /> now signs in to this account.
      </Notice>
    );
  }
  return (
    <div className="space-y-3">
      <button type="button" className={buttonStyles.primary + " w-full"} onClick={siwe.start} disabled={busy || step === "wrong-chain"}>
        {busy ? <Spinner className="size-4" /> : <WalletIcon className="size-4" />}
        {address && step !== "connecting" ? (
          <span>
            Link <ShortAddress address={address} />
          </span>
        ) : (
          <span>Link wallet</span>
        )}
      </button>
      <div aria-live="polite" className="text-center text-sm text-slate-700">
        {busy ? progress[step] : ""}
      </div>
      <WrongChainNotice siwe={siwe} chainLabel={chainLabel}>
        Keyfob uses {chainLabel}. Switch networks, or sign anyway: the message names {chainLabel}, and signing sends no transaction.
      </WrongChainNotice>
      {problem && (
        <Notice
          tone={problem.kind === "no-wallet" ? "info" : "error"}
          title={problem.title}
          actions={
            problem.restart ? (
              <button type="button" className={buttonStyles.primary} onClick={() => window.location.reload()}>
                Reload
              </button>
            ) : undefined
          }
        >
          {problem.message}
        </Notice>
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
