/** Building blocks of the admin dashboard (server-safe: no hooks). */
import Link from "next/link";
import type { ReactNode } from "react";
import { LocalTime, utcText } from "./time";

export const focusRing = "focus-visible:outline-none focus-visible:ring-2 focus-visible:ring-indigo-600 focus-visible:ring-offset-2";

export const button = {
  primary: `inline-flex min-h-10 items-center justify-center gap-2 rounded-lg bg-indigo-600 px-3.5 py-2 text-sm font-semibold text-white shadow-xs transition hover:bg-indigo-500 active:bg-indigo-700 disabled:cursor-not-allowed disabled:opacity-60 ${focusRing}`,
  secondary: `inline-flex min-h-10 items-center justify-center gap-2 rounded-lg border border-slate-300 bg-white px-3.5 py-2 text-sm font-medium text-slate-800 shadow-xs transition hover:bg-slate-50 disabled:cursor-not-allowed disabled:opacity-60 ${focusRing}`,
  danger: `inline-flex min-h-10 items-center justify-center gap-2 rounded-lg bg-red-600 px-3.5 py-2 text-sm font-semibold text-white shadow-xs transition hover:bg-red-500 active:bg-red-700 disabled:cursor-not-allowed disabled:opacity-60 ${focusRing}`,
  dangerOutline: `inline-flex min-h-10 items-center justify-center gap-2 rounded-lg border border-red-300 bg-white px-3.5 py-2 text-sm font-medium text-red-700 transition hover:bg-red-50 disabled:cursor-not-allowed disabled:opacity-60 ${focusRing}`,
  small: `inline-flex min-h-8 items-center justify-center gap-1.5 rounded-md border border-slate-300 bg-white px-2.5 py-1 text-xs font-medium text-slate-700 transition hover:bg-slate-50 disabled:cursor-not-allowed disabled:opacity-60 ${focusRing}`,
  smallDanger: `inline-flex min-h-8 items-center justify-center gap-1.5 rounded-md border border-red-200 bg-white px-2.5 py-1 text-xs font-medium text-red-700 transition hover:bg-red-50 disabled:cursor-not-allowed disabled:opacity-60 ${focusRing}`,
};

export const inputClass =
  "block w-full min-h-10 rounded-lg border border-slate-300 bg-white px-3 py-2 text-sm text-slate-900 shadow-xs placeholder:text-slate-400 focus:border-indigo-500 focus:outline-none focus:ring-2 focus:ring-indigo-500/30 aria-[invalid=true]:border-red-500 aria-[invalid=true]:ring-red-500/20";

export function PageHeader({
  title,
  description,
  actions,
  breadcrumb,
}: {
  title: string;
  description?: ReactNode;
  actions?: ReactNode;
  breadcrumb?: ReactNode;
}) {
  return (
    <header className="mb-6 flex flex-col gap-3 sm:flex-row sm:items-end sm:justify-between">
      <div className="min-w-0">
        {breadcrumb && (
          <nav aria-label="Breadcrumb" className="mb-1 text-sm text-slate-500">
            {breadcrumb}
          </nav>
        )}
        <h1 className="text-2xl font-semibold tracking-tight wrap-anywhere text-slate-900">{title}</h1>
        {description && <div className="mt-1 text-sm text-slate-600">{description}</div>}
      </div>
      {actions && <div className="flex shrink-0 flex-wrap gap-2">{actions}</div>}
    </header>
  );
}

export function Card({
  title,
  description,
  children,
  actions,
  id,
}: {
  title?: string;
  description?: ReactNode;
  children: ReactNode;
  actions?: ReactNode;
  id?: string;
}) {
  const headingId = id ? `${id}-title` : undefined;
  return (
    // min-w-0: in a grid or flex layout a card never grows past its column for a wide table (the table scrolls instead).
    <section id={id} aria-labelledby={headingId} className="min-w-0 scroll-mt-4 rounded-xl bg-white shadow-xs ring-1 ring-slate-200">
      {(title || actions) && (
        <div className="flex flex-col gap-2 border-b border-slate-100 px-4 py-3 sm:flex-row sm:items-center sm:justify-between sm:px-5">
          <div>
            {title && (
              <h2 id={headingId} className="text-base font-semibold text-slate-900">
                {title}
              </h2>
            )}
            {description && <div className="mt-0.5 text-sm text-slate-600">{description}</div>}
          </div>
          {actions && <div className="flex flex-wrap gap-2">{actions}</div>}
        </div>
      )}
      <div className="px-4 py-4 sm:px-5">{children}</div>
    </section>
  );
}

export function EmptyState({ title, children, action }: { title: string; children?: ReactNode; action?: ReactNode }) {
  return (
    <div className="rounded-xl border border-dashed border-slate-300 bg-white px-4 py-10 text-center wrap-anywhere sm:px-6">
      <p className="font-medium text-slate-900">{title}</p>
      {children && <div className="mx-auto mt-1 max-w-md text-sm text-slate-600">{children}</div>}
      {action && <div className="mt-4 flex justify-center">{action}</div>}
    </div>
  );
}

const badgeTones = {
  green: "bg-emerald-50 text-emerald-800 ring-emerald-600/20",
  red: "bg-red-50 text-red-800 ring-red-600/20",
  amber: "bg-amber-50 text-amber-900 ring-amber-600/20",
  slate: "bg-slate-100 text-slate-700 ring-slate-500/20",
  indigo: "bg-indigo-50 text-indigo-800 ring-indigo-600/20",
};

export function Badge({ tone, children }: { tone: keyof typeof badgeTones; children: ReactNode }) {
  return (
    <span
      className={`inline-flex items-center rounded-full px-2 py-0.5 text-xs font-medium whitespace-nowrap ring-1 ring-inset ${badgeTones[tone]}`}
    >
      {children}
    </span>
  );
}

/** Previous / next links that keep the other query parameters. */
export function Pagination({
  page,
  pageSize,
  total,
  href,
}: {
  page: number;
  pageSize: number;
  total: number;
  href: (page: number) => string;
}) {
  const pages = Math.max(1, Math.ceil(total / pageSize));
  if (total === 0) return null;
  const first = (page - 1) * pageSize + 1;
  const last = Math.min(total, page * pageSize);
  const link = `${button.small} min-h-9 px-3`;
  const off = `${link} pointer-events-none opacity-50`;
  return (
    <nav aria-label="Pagination" className="mt-4 flex flex-wrap items-center justify-between gap-3 text-sm text-slate-600">
      <p>
        {first > total ? "No rows on this page" : `${first}–${last}`} of {total} · page {Math.min(page, pages)} of {pages}
      </p>
      <div className="flex gap-2">
        {page > 1 ? (
          <Link className={link} href={href(Math.min(page - 1, pages))} rel="prev">
            ← Previous
          </Link>
        ) : (
          <span className={off} aria-disabled="true">
            ← Previous
          </span>
        )}
        {page < pages ? (
          <Link className={link} href={href(page + 1)} rel="next">
            Next →
          </Link>
        ) : (
          <span className={off} aria-disabled="true">
            Next →
          </span>
        )}
      </div>
    </nav>
  );
}

/** Dates as UTC text, the same on the server and in every browser (CSV, attributes). */
export function formatDate(date: Date | string | null | undefined, withTime = true): string {
  if (!date) return "—";
  return utcText(new Date(date), withTime);
}

/** A date in the viewer's time zone (relative when recent), UTC on hover. */
export function DateText({
  date,
  withTime = true,
  relative = true,
}: {
  date: Date | string | null | undefined;
  withTime?: boolean;
  relative?: boolean;
}) {
  if (!date) return <span className="text-slate-400">—</span>;
  return <LocalTime iso={new Date(date).toISOString()} withTime={withTime} relative={relative} />;
}

/** A value shown exactly as stored (ids, addresses, URIs): monospace, wrapping where it must and only there. */
export function Mono({ children, className = "" }: { children: ReactNode; className?: string }) {
  return <code className={`font-mono text-[13px] wrap-anywhere text-slate-800 ${className}`}>{children}</code>;
}

export function Skeleton({ className = "" }: { className?: string }) {
  return <div className={`animate-pulse rounded-md bg-slate-200/80 ${className}`} />;
}

/** The loading state of a list page: a header and a few placeholder rows. */
export function ListSkeleton({ label, rows = 6 }: { label: string; rows?: number }) {
  return (
    <div role="status" aria-live="polite" aria-busy="true">
      <span className="sr-only">{label}</span>
      <Skeleton className="mb-2 h-8 w-48" />
      <Skeleton className="mb-6 h-4 w-72 max-w-full" />
      <div className="rounded-xl bg-white p-4 shadow-xs ring-1 ring-slate-200 sm:p-5">
        <Skeleton className="mb-5 h-10 w-full max-w-md" />
        <div className="space-y-4">
          {Array.from({ length: rows }, (_, i) => (
            // biome-ignore lint/suspicious/noArrayIndexKey: placeholder rows, all alike and never reordered
            <div key={i} className="flex gap-4">
              <Skeleton className="h-4 flex-1" />
              <Skeleton className="h-4 w-1/4" />
              <Skeleton className="hidden h-4 w-1/6 sm:block" />
            </div>
          ))}
        </div>
      </div>
    </div>
  );
}

/** A notice above a page's content (after a redirect, e.g. "client deleted"). */
export function Banner({ tone, children }: { tone: "success" | "info" | "error"; children: ReactNode }) {
  const styles = {
    success: "border-emerald-200 bg-emerald-50 text-emerald-900",
    info: "border-sky-200 bg-sky-50 text-sky-950",
    error: "border-red-200 bg-red-50 text-red-900",
  }[tone];
  return (
    <div role={tone === "error" ? "alert" : "status"} className={`mb-5 rounded-lg border px-4 py-3 text-sm wrap-anywhere ${styles}`}>
      {children}
    </div>
  );
}
