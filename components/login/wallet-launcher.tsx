"use client";
/**
 * "Continue with a wallet" as the login page first shows it: the wallets this browser offers, found
 * without wagmi (EIP-6963 announcements and window.ethereum, as wallet-options.tsx finds them, and
 * WalletConnect when configured), the list to choose from, and the hint when there is none. The
 * sign-in itself (wallet-login.tsx with wagmi, viem and react-query) is loaded when the person
 * heads for the button (pointer, focus) and takes over when they press it or choose a wallet,
 * carrying on with that choice. Loaded with the page instead, it made the page's first-load
 * JavaScript 52 KB (gzipped) heavier.
 *
 * A browser where a wallet was connected on this site before gets it at once, so that wagmi
 * reconnects that wallet ("Sign in with 0x…") as it always did.
 */
import { useEffect, useRef, useState, type ComponentType } from "react";
import { useTranslations } from "next-intl";
import { Spinner, WalletIcon } from "./icons";
import { buttonStyles, LastUsedBadge } from "./ui";
import { safeIcon, WalletChooser, type WalletChoice } from "./wallet-chooser";
import type { LoadedWalletLoginProps } from "./wallet-login-loaded";
import type { SiweProblem } from "./use-siwe";
import type { WalletStart } from "./wallet-login";
import { GetWalletLink, WalletProblem } from "./wallet-problem";

type Loaded = ComponentType<LoadedWalletLoginProps>;

let loading: Promise<Loaded> | undefined;
function loadWalletLogin(): Promise<Loaded> {
  loading ??= import("./wallet-login-loaded").then(
    (module) => module.LoadedWalletLogin,
    (error: unknown) => {
      loading = undefined; // a later attempt fetches again
      throw error;
    },
  );
  return loading;
}
const prefetch = () => void loadWalletLogin().catch(() => undefined);

/** wagmi's record (localStorage) of a wallet connected on this site: its reconnect would use it. */
function connectedBefore(): boolean {
  try {
    return window.localStorage.getItem("wagmi.recentConnectorId") !== null;
  } catch {
    return false;
  }
}

type Announced = { uuid: string; rdns: string; name: string; icon?: string; provider: unknown };
type Choice = WalletChoice & { rdns?: string };

/** The wallets to offer, in wallet-options.tsx's order: announced ones, a plain window.ethereum, WalletConnect. */
function useWalletChoices(walletConnect: boolean): { options: Choice[]; browserWallets: number; checked: boolean } {
  const t = useTranslations("wallet");
  const [announced, setAnnounced] = useState<Announced[]>([]);
  const [plain, setPlain] = useState<{ present: boolean; announced: boolean } | null>(null);

  useEffect(() => {
    const found: Announced[] = [];
    const onAnnounce = (event: Event) => {
      const detail = (
        event as CustomEvent<{ info?: { uuid?: string; rdns?: string; name?: string; icon?: string }; provider?: unknown } | undefined>
      ).detail;
      const info = detail?.info;
      if (!detail?.provider || !info?.uuid || !info.rdns || !info.name) return;
      // As wagmi lists them: once per rdns.
      if (found.some((wallet) => wallet.uuid === info.uuid || wallet.rdns === info.rdns)) return;
      found.push({ uuid: info.uuid, rdns: info.rdns, name: info.name, icon: safeIcon(info.icon), provider: detail.provider });
      setAnnounced([...found]);
    };
    window.addEventListener("eip6963:announceProvider", onAnnounce);
    window.dispatchEvent(new Event("eip6963:requestProvider"));
    return () => window.removeEventListener("eip6963:announceProvider", onAnnounce);
  }, []);

  useEffect(() => {
    // Extensions inject window.ethereum before or shortly after load; a wallet that also announced
    // itself is listed once, under its own name.
    const check = () => {
      const ethereum = (window as { ethereum?: unknown }).ethereum;
      setPlain({ present: Boolean(ethereum), announced: announced.some((wallet) => wallet.provider === ethereum) });
    };
    check();
    const timer = setTimeout(check, 600);
    return () => clearTimeout(timer);
  }, [announced]);

  const options: Choice[] = announced.map((wallet) => ({
    key: wallet.uuid,
    kind: "eip6963",
    name: wallet.name,
    icon: wallet.icon,
    rdns: wallet.rdns,
  }));
  if (plain?.present && !plain.announced) options.push({ key: "injected", kind: "injected", name: t("browserWallet") });
  const browserWallets = options.length;
  if (walletConnect) options.push({ key: "walletConnect", kind: "walletconnect", name: t("walletConnectName") });
  return { options, browserWallets, checked: plain !== null };
}

export function WalletLauncher(props: Omit<LoadedWalletLoginProps, "start">) {
  const t = useTranslations("wallet");
  const errors = useTranslations("loginErrors");
  const common = useTranslations("common");
  const { options, browserWallets, checked } = useWalletChoices(Boolean(props.walletConnect));
  const [Loaded, setLoaded] = useState<Loaded | null>(null);
  const [start, setStart] = useState<WalletStart>();
  const [loadingStart, setLoadingStart] = useState(false);
  const [failure, setFailure] = useState<SiweProblem | null>(null);
  const [choosing, setChoosing] = useState(false);
  const activating = useRef<WalletStart | undefined>(undefined);
  const last = useRef<WalletStart>({});

  useEffect(() => {
    if (!connectedBefore()) return;
    loadWalletLogin().then(
      (component) => {
        if (!activating.current) setLoaded(() => component);
      },
      () => undefined,
    );
  }, []);

  const activate = (wanted: WalletStart) => {
    if (activating.current) return;
    activating.current = wanted;
    last.current = wanted;
    setFailure(null);
    setLoadingStart(true);
    loadWalletLogin().then(
      (component) => {
        setStart(wanted);
        setLoaded(() => component);
      },
      () => {
        activating.current = undefined;
        setLoadingStart(false);
        setFailure({ kind: "server", detail: errors("unavailable") });
      },
    );
  };

  if (Loaded) return <Loaded {...props} start={start} />;

  const toStart = (option: Choice): WalletStart => ({ kind: option.kind, rdns: option.rdns });
  const onMain = () => {
    if (options.length > 1) return setChoosing((open) => !open);
    activate(options.length === 1 ? toStart(options[0]) : {});
  };

  return (
    <div className="space-y-3">
      <button
        id="wallet-button"
        type="button"
        className={buttonStyles.option}
        onClick={onMain}
        onPointerEnter={prefetch}
        onFocus={prefetch}
        aria-describedby="wallet-help"
        aria-expanded={options.length > 1 ? choosing : undefined}
        aria-controls={options.length > 1 ? "wallet-chooser" : undefined}
      >
        <span className="flex size-5 items-center justify-center text-slate-700 dark:text-slate-200">
          {loadingStart ? <Spinner className="size-5" /> : <WalletIcon />}
        </span>
        <span>{t("continue")}</span>
        {props.lastUsed && <LastUsedBadge label={common("lastUsed")} />}
      </button>

      {choosing && !loadingStart && (
        <WalletChooser
          id="wallet-chooser"
          options={options}
          onChoose={(option) => {
            setChoosing(false);
            activate(toStart(option));
          }}
        />
      )}

      <p id="wallet-help" className="text-center text-xs leading-relaxed text-slate-600 dark:text-slate-300">
        {t("help")}
      </p>

      <WalletProblem problem={failure} step="idle" onRetry={() => activate(last.current)} />

      {!failure && checked && browserWallets === 0 && (
        <p className="text-center text-xs text-slate-600 dark:text-slate-300" data-testid="no-wallet-hint">
          {options.length > 0 ? t("detectedNonePhone") : t("detectedNone")} <GetWalletLink className={`${buttonStyles.link} text-xs`} />
        </p>
      )}
    </div>
  );
}
