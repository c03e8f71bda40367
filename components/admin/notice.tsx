"use client";
/**
 * A one-time notice after a redirect (e.g. "Client created", from `?created=1`): the query
 * parameter is dropped from the address at once, so reloading or coming back does not show it
 * again, and the admin can close it; it also goes when the page's content changes after an action.
 */
import { useEffect, useState, type ReactNode } from "react";

export function OneTimeNotice({ param, children }: { param: string; children: ReactNode }) {
  const [shown, setShown] = useState(true);
  useEffect(() => {
    const url = new URL(window.location.href);
    if (url.searchParams.has(param)) {
      url.searchParams.delete(param);
      window.history.replaceState(window.history.state, "", `${url.pathname}${url.search}${url.hash}`);
    }
  }, [param]);
  if (!shown) return null;
  return (
    <div
      role="status"
      className="mb-5 flex items-start justify-between gap-3 rounded-lg border border-emerald-200 bg-emerald-50 px-4 py-3 text-sm text-emerald-900"
    >
      <div className="min-w-0">{children}</div>
      <button
        type="button"
        onClick={() => setShown(false)}
        aria-label="Dismiss"
        className="-my-1 -mr-2 inline-grid size-7 shrink-0 place-items-center rounded-md text-emerald-800 hover:bg-emerald-100 focus-visible:ring-2 focus-visible:ring-emerald-600 focus-visible:outline-none"
      >
        <svg className="size-4" viewBox="0 0 20 20" fill="currentColor" aria-hidden="true">
          <path d="M6.28 5.22a.75.75 0 0 0-1.06 1.06L8.94 10l-3.72 3.72a.75.75 0 1 0 1.06 1.06L10 11.06l3.72 3.72a.75.75 0 1 0 1.06-1.06L11.06 10l3.72-3.72a.75.75 0 0 0-1.06-1.06L10 8.94 6.28 5.22Z" />
        </svg>
      </button>
    </div>
  );
}
