/** The account page's overview: its id, whether it is an admin, and links to what it holds and its audit events. */
import Link from "next/link";
import { CopyableId } from "@/components/admin/id";
import { Card, DateText, Mono } from "@/components/admin/ui";
import type { AdminAccount } from "./types";

export function AccountOverview({ account }: { account: AdminAccount }) {
  const tokensHref = `/admin/tokens?${new URLSearchParams({ account: account.id })}`;
  return (
    <Card id="overview" title="Account">
      <dl className="grid gap-x-6 gap-y-3 text-sm sm:grid-cols-[10rem_minmax(0,1fr)]">
        <dt className="font-medium text-slate-600">Account ID</dt>
        <dd className="min-w-0">
          <CopyableId value={account.id} label="account ID" />
          <p className="mt-0.5 text-xs text-slate-500">
            The tokens&apos; user id (sub encodes it with the connector) and ethereum_address.
          </p>
        </dd>
        <dt className="font-medium text-slate-600">Admin</dt>
        <dd>
          {account.configuredAdmin ? (
            "Yes, configured (ADMIN_ADDRESSES)"
          ) : account.adminRole ? (
            <>
              Yes, granted by <Mono>{account.adminRole.grantedBy}</Mono> <DateText date={account.adminRole.grantedAt} /> (
              <Link className="text-indigo-700 underline underline-offset-2" href="/admin/admins">
                Admins
              </Link>
              )
            </>
          ) : (
            "No"
          )}
        </dd>
        <dt className="font-medium text-slate-600">Grants and tokens</dt>
        <dd className="flex flex-wrap gap-x-4 gap-y-1">
          <Link className="text-indigo-700 hover:underline" href={tokensHref}>
            {account.holdings.accessTokens} active access token{account.holdings.accessTokens === 1 ? "" : "s"}
          </Link>
          <Link className="text-indigo-700 hover:underline" href={`${tokensHref}#refresh-grants`}>
            {account.holdings.refreshGrants} refresh grant{account.holdings.refreshGrants === 1 ? "" : "s"}
          </Link>
          <Link className="text-indigo-700 hover:underline" href={`/admin/audit?${new URLSearchParams({ account: account.id })}`}>
            Audit log
          </Link>
        </dd>
      </dl>
    </Card>
  );
}
