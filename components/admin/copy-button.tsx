"use client";
/** Copies a value to the clipboard and says so (to screen readers too). */
import { useState } from "react";
import { button } from "./ui";

export function CopyButton({ value, label = "Copy", className = button.small }: { value: string; label?: string; className?: string }) {
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
  return (
    <button type="button" className={className} onClick={copy}>
      <span aria-hidden={copied !== undefined}>{copied === "yes" ? "Copied" : copied === "failed" ? "Copy failed: select and copy" : label}</span>
      <span className="sr-only" role="status">
        {copied === "yes" ? "Copied to the clipboard" : copied === "failed" ? "Could not copy; select the text and copy it" : ""}
      </span>
    </button>
  );
}
