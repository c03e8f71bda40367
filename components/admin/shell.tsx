/** The dashboard's frame: brand, the signed-in admin, sign out here or everywhere (POST /admin/logout) and the sections. */
import Link from "next/link";
import type { ReactNode } from "react";
import { AdminNav } from "./nav";
import { button, focusRing } from "./ui";

export function AdminShell({ who, children }: { who: string; children: ReactNode }) {
  return (
    <div className="min-h-dvh bg-slate-50 text-slate-900">
      <a
        href="#main"
        className={`sr-only focus:not-sr-only focus:absolute focus:top-2 focus:left-2 focus:z-50 focus:rounded-md focus:bg-white focus:px-3 focus:py-2 ${focusRing}`}
      >
        Skip to content
      </a>
      <header className="border-b border-slate-200 bg-white">
        <div className="mx-auto flex max-w-7xl flex-col gap-3 px-4 pt-3 sm:px-6">
          <div className="flex items-center justify-between gap-3">
            <Link href="/admin" className={`flex items-center gap-2 rounded-md text-slate-900 ${focusRing}`}>
              <span className="grid size-8 place-items-center rounded-lg bg-indigo-600 text-white shadow-sm">
                <svg
                  className="size-4"
                  viewBox="0 0 24 24"
                  aria-hidden="true"
                  fill="none"
                  stroke="currentColor"
                  strokeWidth="2"
                  strokeLinecap="round"
                  strokeLinejoin="round"
                >
                  <circle cx="7.5" cy="15.5" r="4.5" />
                  <path d="m10.7 12.3 9.8-9.8" />
                  <path d="m15.5 7.5 3 3" />
                </svg>
              </span>
              <span className="font-semibold tracking-tight">
                Keyfob <span className="font-normal text-slate-500">admin</span>
              </span>
            </Link>
            <div className="flex min-w-0 flex-wrap items-center justify-end gap-2 sm:gap-3">
              <span className="hidden min-w-0 truncate text-sm text-slate-600 sm:inline" title={who}>
                Signed in as <span className="font-mono text-[13px] text-slate-800">{who}</span>
              </span>
              <form action="/admin/logout" method="post">
                <button type="submit" className={button.small}>
                  Sign out
                </button>
              </form>
              <form action="/admin/logout" method="post">
                <input type="hidden" name="everywhere" value="1" />
                <button type="submit" className={button.small} title="End every dashboard session of this account, in every browser">
                  Sign out everywhere
                </button>
              </form>
            </div>
          </div>
          <div className="pb-2">
            <AdminNav />
          </div>
        </div>
      </header>
      <main id="main" className="mx-auto max-w-7xl px-4 py-6 sm:px-6 sm:py-8">
        {children}
      </main>
    </div>
  );
}
