/**
 * An id as stored (client id, account address, jti, kid…): monospace, with a copy button beside it.
 * It wraps cleanly, or with `truncate` (in lists) stays on one line cut with an ellipsis, or with
 * `short` (several ids on one line) is cut to its ends, 0x1234…abcd: the whole value stays in the
 * page (for screen readers, find in page), shows on hover and is what the button copies.
 */
import type { ReactNode } from "react";
import { CopyButton } from "./copy-button";
import { Mono } from "./ui";

export function CopyableId({
  value,
  label,
  children,
  truncate = false,
  short = false,
}: {
  value: string /** What it is, for the button's name: "Copy <label>". */;
  label: string;
  children?: ReactNode;
  truncate?: boolean;
  short?: boolean;
}) {
  if (short && shortId(value) !== value) {
    return (
      <span className="inline-flex items-center gap-1 align-top whitespace-nowrap" title={value}>
        <Mono>
          <span aria-hidden="true">{shortId(value)}</span>
          <span className="sr-only">{value}</span>
        </Mono>
        <CopyButton value={value} label={`Copy ${label}`} compact />
      </span>
    );
  }
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

/** An id cut to its first six and last four characters (an address: 0x and four digits at each end). */
export function shortId(value: string): string {
  return value.length > 13 ? `${value.slice(0, 6)}…${value.slice(-4)}` : value;
}

/** How an account's identity is named: a wallet, Google, Apple, a passkey. */
export function identityLabel(provider: string): string {
  return ({ web3: "Wallet", google: "Google", apple: "Apple", passkey: "Passkey" } as Record<string, string>)[provider] ?? provider;
}
