/** The account page's identities: the ways into the account (wallets, Google, Apple, passkeys). */
import { type Column, DataTable } from "@/components/admin/data-table";
import { CopyableId, identityLabel } from "@/components/admin/id";
import { Badge, Card, DateText } from "@/components/admin/ui";
import type { AdminAccount } from "./types";

const columns: Column<AdminAccount["identities"][number]>[] = [
  { header: "Kind", cell: (identity) => <Badge tone="slate">{identityLabel(identity.provider)}</Badge> },
  {
    header: "Identity",
    className: "min-w-[12rem]",
    cell: (identity) => (
      <>
        {identity.email && (
          <span className="block text-slate-800">
            {identity.email} {identity.emailVerified ? <Badge tone="green">verified</Badge> : <Badge tone="amber">unverified</Badge>}
          </span>
        )}
        <CopyableId value={identity.subject} label={`${identityLabel(identity.provider)} subject`} />
      </>
    ),
  },
  { header: "Added", hideBelow: "md", cell: (identity) => <DateText date={identity.createdAt} /> },
  { header: "Last login", cell: (identity) => <DateText date={identity.lastLoginAt} /> },
];

export function Identities({ account }: { account: AdminAccount }) {
  return (
    <Card id="identities" title="Identities" description="The ways into this account.">
      <DataTable
        caption="Identities of this account"
        columns={columns}
        rows={account.identities}
        rowKey={(identity) => `${identity.provider}:${identity.subject}`}
        empty={<p className="text-sm text-slate-600">None.</p>}
      />
    </Card>
  );
}
