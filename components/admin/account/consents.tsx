/** The account page's consent grants to third-party clients: one row each, revocable (with the client's refresh tokens). */
import { revokeConsentAction } from "@/app/admin/_lib/actions";
import { ConfirmAction } from "@/components/admin/confirm";
import { actionsColumn, type Column, DataTable } from "@/components/admin/data-table";
import { Card, DateText, EmptyState, Mono } from "@/components/admin/ui";
import type { AdminAccount } from "./types";

type Consent = AdminAccount["consents"][number];

const columns = (accountId: string): Column<Consent>[] => [
  {
    header: "Client",
    className: "min-w-[11rem]",
    cell: (consent) => (
      <>
        {consent.clientName}
        <span className="mt-0.5 block text-xs text-slate-500">
          <Mono className="text-xs text-slate-500">{consent.clientId}</Mono>
        </span>
      </>
    ),
  },
  { header: "Scopes", cell: (consent) => <Mono>{consent.scope.join(" ")}</Mono> },
  { header: "Granted", hideBelow: "md", cell: (consent) => <DateText date={consent.grantedAt} /> },
  actionsColumn((consent) => (
    <ConfirmAction
      action={revokeConsentAction}
      fields={{ accountId, clientId: consent.clientId }}
      trigger="Revoke"
      triggerLabel={`Revoke the consent to ${consent.clientName}`}
      title="Revoke this consent?"
      confirmLabel="Revoke consent"
      pendingLabel="Revoking…"
    >
      The client's refresh tokens for this account end at once; its next login asks the user's consent again.
    </ConfirmAction>
  )),
];

export function Consents({ account }: { account: AdminAccount }) {
  return (
    <Card
      id="consents"
      title="Consents"
      description="What this account allowed third-party clients (those set to ask users' consent). The account sees and revokes them at /account too."
    >
      <DataTable
        caption="Consent grants"
        columns={columns(account.id)}
        rows={account.consents}
        rowKey={(consent) => consent.clientId}
        empty={
          <EmptyState title="No consents">A grant appears when the account allows a third-party client on the consent page.</EmptyState>
        }
      />
    </Card>
  );
}
