/** An id as stored (client id, account address, jti, kid…): monospace, wrapping cleanly, with a copy button beside it. */
import type { ReactNode } from "react";
import { CopyButton } from "./copy-button";
import { Mono } from "./ui";

export function CopyableId({
  value,
  label,
  children,
}: {
  value: string /** What it is, for the button's name: "Copy <label>". */;
  label: string;
  children?: ReactNode;
}) {
  return (
    <span className="inline-flex max-w-full min-w-0 items-start gap-1 align-top">
      <span className="min-w-0">{children ?? <Mono>{value}</Mono>}</span>
      <CopyButton value={value} label={`Copy ${label}`} compact />
    </span>
  );
}

/** How an account's identity is named: a wallet, Google, Apple, a passkey. */
export function identityLabel(provider: string): string {
  return ({ web3: "Wallet", google: "Google", apple: "Apple", passkey: "Passkey" } as Record<string, string>)[provider] ?? provider;
}
