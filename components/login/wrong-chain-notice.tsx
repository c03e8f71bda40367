"use client";
import type { ReactNode } from "react";
import { chainName } from "../providers";
import { buttonStyles, Notice } from "./ui";
import type { useSiwe } from "./use-siwe";

/** Shown while the wallet is on another chain than the message's: switch first, or sign anyway. */
export function WrongChainNotice({ siwe, chainLabel, children }: { siwe: ReturnType<typeof useSiwe>; chainLabel: string; children: ReactNode }) {
  if (siwe.step !== "wrong-chain" || siwe.walletChainId === undefined) return null;
  return (
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
      {children}
    </Notice>
  );
}
