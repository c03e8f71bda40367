/** The account page's wallets: its own address and the wallets linked to it, which log into it. */
import { CopyableId } from "@/components/admin/id";
import { Card, DateText } from "@/components/admin/ui";
import type { AdminAccount } from "./types";

export function Wallets({ account }: { account: AdminAccount }) {
  return (
    <Card id="wallets" title="Wallets" description="Wallets that log into this account; Flow A tokens they get name the wallet.">
      {account.wallets.length === 0 ? (
        <p className="text-sm text-slate-600">
          No wallet: this account signs in with Google, Apple or a passkey. A wallet can be linked at /account.
        </p>
      ) : (
        <ul className="divide-y divide-slate-100" aria-label="Wallets">
          {account.wallets.map((wallet) => (
            <li key={wallet.address} className="flex flex-col gap-1 py-2.5 sm:flex-row sm:items-center sm:justify-between">
              <CopyableId value={wallet.address} label={`wallet ${wallet.address}`} />
              <span className="text-sm text-slate-600">
                {wallet.own ? (
                  "The account's own address"
                ) : (
                  <>
                    Linked <DateText date={wallet.linkedAt} />
                  </>
                )}
              </span>
            </li>
          ))}
        </ul>
      )}
    </Card>
  );
}
