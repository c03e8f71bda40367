/**
 * An id as stored (client id, account address, jti, kid…): monospace, with a copy button beside it.
 * It wraps cleanly, or with `truncate` (in lists) stays on one line cut with an ellipsis: the whole
 * value stays in the page (for screen readers, find in page), shows on hover and is what the button copies.
 */
import type { ReactNode } from "react";
import { CopyButton } from "./copy-button";
import { Mono } from "./ui";

export function CopyableId({
  value,
  label,
  children,
  truncate = false,
}: {
  value: string /** What it is, for the button's name: "Copy <label>". */;
  label: string;
  children?: ReactNode;
  truncate?: boolean;
}) {
  return (
    <span className="inline-flex max-w-full min-w-0 items-start gap-1 align-top">
      {/* Truncated, the child itself is cut: its box ends where its text is clipped (no link reaching under the button). */}
      <span
        className={truncate ? "block max-w-[9rem] min-w-0 *:block *:truncate sm:max-w-[14rem]" : "min-w-0"}
        title={truncate ? value : undefined}
      >
        {children ?? <Mono>{value}</Mono>}
      </span>
      <CopyButton value={value} label={`Copy ${label}`} compact />
    </span>
  );
}

/** How an account's identity is named: a wallet, Google, Apple, a passkey. */
export function identityLabel(provider: string): string {
  return ({ web3: "Wallet", google: "Google", apple: "Apple", passkey: "Passkey" } as Record<string, string>)[provider] ?? provider;
}
