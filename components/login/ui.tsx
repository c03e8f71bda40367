/** Building blocks shared by the login, error and account pages. */
import type { ReactNode } from "react";
import { AlertIcon, InfoIcon, KeyIcon } from "./icons";

const focusRing = "focus-visible:outline-none focus-visible:ring-2 focus-visible:ring-indigo-600 focus-visible:ring-offset-2";

export const buttonStyles = {
  /** A full-width sign-in option. */
  option: `relative flex w-full min-h-12 items-center justify-center gap-3 rounded-xl border border-slate-300 bg-white px-4 py-3 text-[15px] font-medium text-slate-900 shadow-xs transition hover:bg-slate-50 hover:border-slate-400 active:bg-slate-100 disabled:cursor-not-allowed disabled:opacity-60 ${focusRing}`,
  primary: `inline-flex min-h-11 items-center justify-center gap-2 rounded-xl bg-indigo-600 px-4 py-2.5 text-sm font-semibold text-white shadow-xs transition hover:bg-indigo-500 active:bg-indigo-700 disabled:cursor-not-allowed disabled:opacity-60 ${focusRing}`,
  secondary: `inline-flex min-h-11 items-center justify-center gap-2 rounded-xl border border-slate-300 bg-white px-4 py-2.5 text-sm font-medium text-slate-800 transition hover:bg-slate-50 disabled:cursor-not-allowed disabled:opacity-60 ${focusRing}`,
  link: `rounded-md px-1 text-sm font-medium text-indigo-700 underline-offset-4 hover:underline disabled:opacity-60 ${focusRing}`,
  quiet: `rounded-md px-2 py-1 text-sm font-medium text-slate-600 underline-offset-4 hover:text-slate-900 hover:underline ${focusRing}`,
};

/** The page frame: brand on top, one card, an optional footer below. */
export function AuthShell({ title, subtitle, children, footer }: { title: string; subtitle?: ReactNode; children: ReactNode; footer?: ReactNode }) {
  return (
    <main className="flex min-h-dvh flex-col items-center bg-gradient-to-b from-slate-100 to-slate-50 px-4 py-8 sm:justify-center sm:py-16">
      <div className="w-full max-w-[26rem]">
        <div className="mb-6 flex items-center justify-center gap-2 text-slate-800">
          <span className="grid size-9 place-items-center rounded-xl bg-indigo-600 text-white shadow-sm">
            <KeyIcon className="size-5" />
          </span>
          <span className="text-lg font-semibold tracking-tight">Keyfob</span>
        </div>
        <section aria-labelledby="page-title" className="rounded-2xl bg-white p-6 shadow-sm ring-1 ring-slate-200 sm:p-8">
          <h1 id="page-title" className="text-center text-xl font-semibold tracking-tight text-slate-900 sm:text-2xl">
            {title}
          </h1>
          {subtitle && <div className="mt-2 text-center text-sm text-slate-600">{subtitle}</div>}
          <div className="mt-6">{children}</div>
        </section>
        {footer && <div className="mt-6 space-y-3 text-center">{footer}</div>}
      </div>
    </main>
  );
}

export function Divider({ children }: { children: ReactNode }) {
  return (
    <div className="my-5 flex items-center gap-3 text-xs font-medium uppercase tracking-wider text-slate-500" role="separator">
      <span className="h-px flex-1 bg-slate-200" />
      {children}
      <span className="h-px flex-1 bg-slate-200" />
    </div>
  );
}

/** A message in the card: errors are announced at once (role=alert), information politely. */
export function Notice({ tone, title, children, actions }: { tone: "error" | "info" | "warning"; title?: string; children?: ReactNode; actions?: ReactNode }) {
  const styles = {
    error: "border-red-200 bg-red-50 text-red-900",
    warning: "border-amber-200 bg-amber-50 text-amber-950",
    info: "border-sky-200 bg-sky-50 text-sky-950",
  }[tone];
  const Icon = tone === "info" ? InfoIcon : AlertIcon;
  return (
    <div role={tone === "error" ? "alert" : "status"} className={`flex gap-3 rounded-xl border p-3.5 text-sm ${styles}`}>
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
