"use client";
/**
 * The wallet button of the login page and of /account's "Link wallet": useSiwe, plus choosing a
 * wallet (at once with one, from a list with several), the WalletConnect dialog while a phone
 * wallet pairs, and focus back on the button when that dialog is closed.
 */
import { useEffect, useRef, useState } from "react";
import { useSiwe, type SiweOptions } from "./use-siwe";
import { usePairingUri } from "./walletconnect-dialog";
import { useWalletOptions, type WalletOption } from "./wallet-options";

export function useWalletButton(siweOptions: SiweOptions) {
  const siwe = useSiwe(siweOptions);
  const { step, address } = siwe;
  const { options, browserWallets, checked } = useWalletOptions();
  const [choosing, setChoosing] = useState(false);
  // "done" too: the login page is leaving, or /account shows the linked wallet instead.
  const busy = step !== "idle" && step !== "wrong-chain";
  const walletConnect = siwe.chosen?.id === "walletConnect";
  const dialogOpen = walletConnect && step === "connecting";
  const uri = usePairingUri(options.find((o) => o.kind === "walletconnect")?.connector, dialogOpen);

  const choose = (option: WalletOption) => {
    setChoosing(false);
    void siwe.start(option.connector);
  };
  /** The button: signs with the connected wallet or the only one there is, else opens or closes the list. */
  const press = () => {
    if (address || options.length === 0) return void siwe.start();
    if (options.length === 1) return void siwe.start(options[0].connector);
    setChoosing((open) => !open);
  };

  // Closing the WalletConnect dialog returns focus to the button, once it is enabled again.
  const button = useRef<HTMLButtonElement>(null);
  const refocus = useRef(false);
  const cancelWalletConnect = () => {
    refocus.current = true;
    siwe.cancel();
  };
  useEffect(() => {
    if (refocus.current && step === "idle") {
      refocus.current = false;
      button.current?.focus();
    }
  }, [step]);

  return {
    siwe,
    options,
    browserWallets,
    checked,
    busy,
    /** The list of wallets is open. */
    choosing,
    choose,
    press,
    walletConnect,
    button,
    /** Props of the WalletConnect dialog, when WalletConnect is configured. */
    walletConnectDialog: options.some((o) => o.kind === "walletconnect")
      ? { open: dialogOpen, uri, onCancel: cancelWalletConnect }
      : undefined,
  };
}
