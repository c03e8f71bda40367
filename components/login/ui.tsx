/**
 * Building blocks shared by the hosted pages (login, error, account): light and dark (the
 * browser's prefers-color-scheme, through Tailwind's `dark:` variant), with visible focus rings.
 */
import type { ReactNode, Ref } from "react";
import { ClientLogo } from "./client-logo";
import { AlertIcon, InfoIcon, KeyIcon } from "./icons";

const focusRing =
  "focus-visible:outline-none focus-visible:ring-2 focus-visible:ring-indigo-600 focus-visible:ring-offset-2 dark:focus-visible:ring-indigo-400 dark:focus-visible:ring-offset-slate-900";

export const buttonStyles = {
  /** A full-width sign-in option. */
  option: `relative flex w-full min-h-12 items-center justify-center gap-3 rounded-xl border border-slate-300 bg-white px-4 py-3 text-[15px] font-medium text-slate-900 shadow-xs transition hover:bg-slate-50 hover:border-slate-400 active:bg-slate-100 disabled:cursor-not-allowed disabled:opacity-60 dark:border-slate-600 dark:bg-slate-800 dark:text-slate-50 dark:hover:bg-slate-700 dark:hover:border-slate-500 ${focusRing}`,
  primary: `inline-flex min-h-11 items-center justify-center gap-2 rounded-xl bg-indigo-600 px-4 py-2.5 text-sm font-semibold text-white shadow-xs transition hover:bg-indigo-500 active:bg-indigo-700 disabled:cursor-not-allowed disabled:opacity-60 ${focusRing}`,
  secondary: `inline-flex min-h-11 items-center justify-center gap-2 rounded-xl border border-slate-300 bg-white px-4 py-2.5 text-sm font-medium text-slate-800 transition hover:bg-slate-50 disabled:cursor-not-allowed disabled:opacity-60 dark:border-slate-600 dark:bg-slate-800 dark:text-slate-100 dark:hover:bg-slate-700 ${focusRing}`,
  link: `rounded-md px-1 text-sm font-medium text-indigo-700 underline-offset-4 hover:underline disabled:opacity-60 dark:text-indigo-300 ${focusRing}`,
  quiet: `rounded-md px-2 py-1 text-sm font-medium text-slate-600 underline-offset-4 hover:text-slate-900 hover:underline dark:text-slate-300 dark:hover:text-white ${focusRing}`,
};

/** "Last used" on the sign-in option this browser used last time, at the option button's top right. */
export function LastUsedBadge({ label }: { label: string }) {
  return (
    <span className="absolute -top-2.5 right-3 rounded-full bg-indigo-600 px-2 py-0.5 text-[11px] leading-4 font-semibold text-white shadow-xs">
      {label}
    </span>
  );
}

/** Keyfob's own mark: leads pages that have no application (error, account), trails the others. */
function KeyfobMark({ small }: { small?: boolean }) {
  return (
    <span
      className={`flex items-center justify-center gap-2 ${small ? "text-slate-600 dark:text-slate-400" : "text-slate-800 dark:text-slate-100"}`}
    >
      <span className={`grid place-items-center rounded-xl bg-indigo-600 text-white shadow-sm ${small ? "size-5 rounded-md" : "size-9"}`}>
        <KeyIcon className={small ? "size-3.5" : "size-5"} />
      </span>
      {!small && <span className="text-lg font-semibold tracking-tight">Keyfob</span>}
    </span>
  );
}

export type Brand = { name: string; logoUrl?: string | null };

/**
 * The page frame: the application's logo and name on top when there is one (Keyfob's own mark then
 * sits below, as "Secured by Keyfob"), one card, an optional footer. `lang` is the page's language.
 */
export function AuthShell({
  title,
  subtitle,
  children,
  footer,
  brand,
  securedBy,
  lang,
}: {
  title: string;
  subtitle?: ReactNode;
  children: ReactNode;
  footer?: ReactNode;
  brand?: Brand;
  securedBy?: string;
  lang?: string;
}) {
  return (
    <main
      lang={lang}
      className="flex min-h-dvh flex-col items-center bg-gradient-to-b from-slate-100 to-slate-50 px-4 py-8 text-slate-900 [color-scheme:light] sm:justify-center sm:py-16 dark:from-slate-950 dark:to-slate-900 dark:text-slate-100 dark:[color-scheme:dark]"
    >
      <div className="w-full max-w-[26rem]">
        {brand ? (
          <header className="mb-6 flex flex-col items-center gap-3 text-center">
            <ClientLogo name={brand.name} src={brand.logoUrl} />
            <p
              className="max-w-full break-words text-lg font-semibold tracking-tight text-slate-900 dark:text-slate-50"
              data-testid="client-name"
            >
              {brand.name}
            </p>
          </header>
        ) : (
          <div className="mb-6">
            <KeyfobMark />
          </div>
        )}
        <section
          aria-labelledby="page-title"
          className="rounded-2xl bg-white p-6 shadow-sm ring-1 ring-slate-200 sm:p-8 dark:bg-slate-900 dark:shadow-none dark:ring-slate-700"
          data-testid="card"
        >
          <h1 id="page-title" className="text-center text-xl font-semibold tracking-tight text-slate-900 sm:text-2xl dark:text-slate-50">
            {title}
          </h1>
          {subtitle && <div className="mt-2 text-center text-sm text-slate-600 dark:text-slate-300">{subtitle}</div>}
          <div className="mt-6">{children}</div>
        </section>
        {footer && <div className="mt-6 space-y-3 text-center">{footer}</div>}
        {brand && securedBy && (
          <p className="mt-8 flex items-center justify-center gap-2 text-xs font-medium">
            <KeyfobMark small />
            <span className="text-slate-600 dark:text-slate-400">{securedBy}</span>
          </p>
        )}
      </div>
    </main>
  );
}

export function Divider({ children }: { children: ReactNode }) {
  return (
    // biome-ignore lint/a11y/useSemanticElements: a separator with a label ("or"), which an <hr> cannot hold
    <div
      className="my-5 flex items-center gap-3 text-xs font-medium uppercase tracking-wider text-slate-600 dark:text-slate-400"
      role="separator"
    >
      <span className="h-px flex-1 bg-slate-200 dark:bg-slate-700" />
      {children}
      <span className="h-px flex-1 bg-slate-200 dark:bg-slate-700" />
    </div>
  );
}

/**
 * A message in the card: errors are announced at once (role=alert), information politely. With
 * `ref` (client components) it can take focus, so that keyboard and screen-reader users land on it.
 */
export function Notice({
  tone,
  title,
  children,
  actions,
  ref,
  testId,
}: {
  tone: "error" | "info" | "warning";
  title?: string;
  children?: ReactNode;
  actions?: ReactNode;
  ref?: Ref<HTMLDivElement>;
  testId?: string;
}) {
  const styles = {
    error: "border-red-200 bg-red-50 text-red-900 dark:border-red-900 dark:bg-red-950 dark:text-red-100",
    warning: "border-amber-200 bg-amber-50 text-amber-950 dark:border-amber-900 dark:bg-amber-950 dark:text-amber-100",
    info: "border-sky-200 bg-sky-50 text-sky-950 dark:border-sky-900 dark:bg-sky-950 dark:text-sky-100",
  }[tone];
  const Icon = tone === "info" ? InfoIcon : AlertIcon;
  return (
    <div
      ref={ref}
      tabIndex={ref ? -1 : undefined}
      role={tone === "error" ? "alert" : "status"}
      data-testid={testId}
      className={`flex gap-3 rounded-xl border p-3.5 text-sm outline-none focus-visible:ring-2 focus-visible:ring-indigo-600 dark:focus-visible:ring-indigo-400 ${styles}`}
    >
      <Icon className="mt-0.5 size-5 shrink-0" />
      <div className="min-w-0 flex-1 space-y-1">
        {title && <p className="font-semibold">{title}</p>}
        {children && <div className="leading-relaxed">{children}</div>}
        {actions && <div className="flex flex-wrap gap-2 pt-2">{actions}</div>}
      </div>
    </div>
  );
}

/** 0x1234…abcd, with the full address for screen readers and on hover. */
export function ShortAddress({ address }: { address: string }) {
  return (
    <span className="font-mono" title={address}>
      <span aria-hidden="true">{`${address.slice(0, 6)}…${address.slice(-4)}`}</span>
      <span className="sr-only">{address}</span>
    </span>
  );
}
