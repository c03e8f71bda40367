"use client";
/**
 * The WalletConnect dialog: while wagmi's walletConnect connector waits for a phone wallet, it shows
 * the pairing URI the connector announces (`display_uri`) as a QR code to scan (desktop), and as a
 * link that opens the wallet app on this device (phones: the `wc:` URI, which installed wallets
 * handle). A native modal <dialog>: focus stays inside, Escape and Cancel close it, and closing it
 * abandons the connection attempt.
 */
import { useEffect, useMemo, useRef, useState } from "react";
import { useTranslations } from "next-intl";
import type { Connector } from "wagmi";
import { encodeQr, qrPath } from "./qr";
import { Spinner } from "./icons";
import { buttonStyles } from "./ui";

/** The latest pairing URI a WalletConnect connector announced, cleared when a new attempt opens. */
export function usePairingUri(connector: Connector | undefined, open: boolean): string | undefined {
  const [uri, setUri] = useState<string>();
  useEffect(() => {
    if (!connector) return;
    const onMessage = ({ type, data }: { type: string; data?: unknown }) => {
      if (type === "display_uri" && typeof data === "string" && data.startsWith("wc:")) setUri(data);
    };
    connector.emitter.on("message", onMessage);
    return () => connector.emitter.off("message", onMessage);
  }, [connector]);
  useEffect(() => {
    if (!open) setUri(undefined);
  }, [open]);
  return open ? uri : undefined;
}

export function WalletConnectDialog({ open, uri, onCancel }: { open: boolean; uri?: string; onCancel: () => void }) {
  const t = useTranslations("wallet.walletConnect");
  const dialog = useRef<HTMLDialogElement>(null);
  const [slow, setSlow] = useState(false);
  const [copied, setCopied] = useState(false);
  const [phone, setPhone] = useState(false);
  const code = useMemo(() => (uri ? encodeQr(uri, "M") : undefined), [uri]);

  useEffect(() => {
    const element = dialog.current;
    if (!element) return;
    if (open && !element.open) {
      setPhone(window.matchMedia("(pointer: coarse)").matches);
      element.showModal();
    } else if (!open && element.open) element.close();
  }, [open]);

  useEffect(() => {
    setSlow(false);
    setCopied(false);
    if (!open || uri) return;
    const timer = setTimeout(() => setSlow(true), 15_000);
    return () => clearTimeout(timer);
  }, [open, uri]);

  const copy = async () => {
    if (!uri) return;
    await navigator.clipboard?.writeText(uri).then(
      () => setCopied(true),
      () => undefined,
    );
  };

  const openApp = uri && (
    <a href={uri} className={`${phone ? buttonStyles.primary : buttonStyles.secondary} w-full`} data-testid="walletconnect-link">
      {t("openApp")}
    </a>
  );
  const qr = code && (
    <svg
      role="img"
      aria-label={t("qrLabel")}
      data-testid="walletconnect-qr"
      viewBox={`0 0 ${code.size + 8} ${code.size + 8}`}
      className={`mx-auto rounded-lg ${phone ? "size-40" : "size-60"}`}
      shapeRendering="crispEdges"
    >
      <rect width="100%" height="100%" fill="#ffffff" />
      <path d={qrPath(code)} fill="#000000" />
    </svg>
  );

  return (
    <dialog
      ref={dialog}
      aria-labelledby="walletconnect-title"
      aria-describedby="walletconnect-help"
      onCancel={(event) => {
        event.preventDefault();
        onCancel();
      }}
      className="m-auto w-[calc(100%-2rem)] max-w-sm rounded-2xl bg-white p-6 text-slate-900 shadow-xl ring-1 ring-slate-200 backdrop:bg-slate-950/60 dark:bg-slate-900 dark:text-slate-100 dark:ring-slate-700"
    >
      <h2 id="walletconnect-title" className="text-center text-lg font-semibold">
        {t("title")}
      </h2>
      <p id="walletconnect-help" className="mt-2 text-center text-sm text-slate-600 dark:text-slate-300">
        {uri ? (phone ? t("openHint") : t("scan")) : t("preparing")}
      </p>
      <div className="mt-5 space-y-3">
        {!uri && (
          <p className="flex items-center justify-center gap-2 py-10 text-sm text-slate-700 dark:text-slate-200" role="status">
            <Spinner className="size-5" />
            {slow ? t("slow") : t("preparing")}
          </p>
        )}
        {phone ? (
          <>
            {openApp}
            {qr}
          </>
        ) : (
          <>
            {qr}
            {openApp}
          </>
        )}
        {uri && (
          <button type="button" className={`${buttonStyles.quiet} w-full`} onClick={copy}>
            {copied ? t("copied") : t("copy")}
          </button>
        )}
        {uri && (
          <p className="text-center text-xs text-slate-600 dark:text-slate-300" role="status">
            {t("waiting")}
          </p>
        )}
        <button type="button" className={`${buttonStyles.secondary} w-full`} onClick={onCancel}>
          {t("cancel")}
        </button>
      </div>
    </dialog>
  );
}
