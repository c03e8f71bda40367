"use client";
/** Copies a value to the clipboard and says so (to screen readers too). `compact`: an icon button for ids in lists and tables. */
import { useState } from "react";
import { button } from "./ui";

export function CopyButton({
  value,
  label = "Copy",
  className = button.small,
  compact = false,
}: {
  value: string;
  /** The button's text, or with `compact` its accessible name (e.g. "Copy client ID"). */
  label?: string;
  className?: string;
  compact?: boolean;
}) {
  const [copied, setCopied] = useState<"yes" | "failed" | undefined>();
  async function copy() {
    try {
      await navigator.clipboard.writeText(value);
      setCopied("yes");
    } catch {
      setCopied("failed");
    }
    setTimeout(() => setCopied(undefined), 2500);
  }
  const status = (
    <span className="sr-only" role="status">
      {copied === "yes" ? "Copied to the clipboard" : copied === "failed" ? "Could not copy; select the text and copy it" : ""}
    </span>
  );
  if (compact) {
    return (
      <button
        type="button"
        onClick={copy}
        aria-label={label}
        title={copied === "yes" ? "Copied" : copied === "failed" ? "Copy failed: select and copy" : label}
        className="inline-grid size-6 shrink-0 place-items-center rounded-md text-slate-500 transition hover:bg-slate-100 hover:text-slate-800 focus-visible:ring-2 focus-visible:ring-indigo-600 focus-visible:outline-none"
      >
        {copied === "yes" ? (
          <svg
            className="size-3.5 text-emerald-600"
            viewBox="0 0 24 24"
            fill="none"
            stroke="currentColor"
            strokeWidth="2.5"
            strokeLinecap="round"
            strokeLinejoin="round"
            aria-hidden="true"
          >
            <path d="m5 12 5 5L20 7" />
          </svg>
        ) : (
          <svg
            className="size-3.5"
            viewBox="0 0 24 24"
            fill="none"
            stroke="currentColor"
            strokeWidth="2"
            strokeLinecap="round"
            strokeLinejoin="round"
            aria-hidden="true"
          >
            <rect x="9" y="9" width="12" height="12" rx="2" />
            <path d="M5 15H4a1 1 0 0 1-1-1V4a1 1 0 0 1 1-1h10a1 1 0 0 1 1 1v1" />
          </svg>
        )}
        {status}
      </button>
    );
  }
  return (
    <button type="button" className={className} onClick={copy}>
      <span aria-hidden={copied !== undefined}>
        {copied === "yes" ? "Copied" : copied === "failed" ? "Copy failed: select and copy" : label}
      </span>
      {status}
    </button>
  );
}
