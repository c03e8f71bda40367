"use client";
/** "Link wallet" on /account: the wallet signs an EIP-4361 message carrying the account's link nonce. */
import { useCallback, useMemo, useState } from "react";
import type { Address } from "viem";
import { createSiweMessage } from "viem/siwe";
import { Spinner, WalletIcon } from "../login/icons";
import { buttonStyles, Notice, ShortAddress } from "../login/ui";
import { useSiwe } from "../login/use-siwe";
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
  const clockOffset = useMemo(() => serverTime - Date.now(), [serverTime]);
  const [linked, setLinked] = useState<string | null>(null);
  const chainLabel = chainName(chainId);
  const message = useCallback(
    (address: Address) =>
      createSiweMessage({
        domain: new URL(issuerUrl).host,
        address,
        statement: `Link this wallet to the Keyfob account ${accountId}. This does not send a transaction or cost a fee.`,
        uri: issuerUrl,
        version: "1",
        chainId,
        nonce,
        issuedAt: new Date(Date.now() + clockOffset),
      }),
    [accountId, chainId, clockOffset, issuerUrl, nonce],
  );
  const submit = useCallback(
    async (text: string, signature: string) => {
      const result = await link(text, signature);
      if ("error" in result) return { error: result.error, restart: /expired/.test(result.error) };
      setLinked(result.linked);
    },
    [link],
  );
  const siwe = useSiwe({ chainId, chainLabel, message, submit });
  const { step, problem, address } = siwe;
  const busy = step === "connecting" || step === "switching" || step === "signing" || step === "submitting";
  const progress: Partial<Record<typeof step, string>> = {
    connecting: "Approve the connection in your wallet…",
    switching: `Approve the switch to ${chainLabel} in your wallet…`,
    signing: "Check your wallet and sign the message…",
    submitting: "Linking…",
  };

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
      {step === "wrong-chain" && siwe.walletChainId !== undefined && (
        <Notice
          tone="warning"
          title={`Your wallet is on ${chainName(siwe.walletChainId)}`}
          actions={
            <>
              <button type="button" className={buttonStyles.primary} onClick={siwe.switchAndSign}>
                Switch to {chainLabel} and sign
              </button>
              <button type="button" className={buttonStyles.secondary} onClick={siwe.signAnyway}>
                Sign anyway
              </button>
            </>
          }
        >
          Keyfob uses {chainLabel}. Switch networks, or sign anyway: the message names {chainLabel}, and signing sends no transaction.
        </Notice>
      )}
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
