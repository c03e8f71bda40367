/**
 * The Tokens page's refresh grants: one row per live grant (a refresh-token family), each revocable,
 * all of the holder's at once from the card's header, with the paging links.
 */
import { revokeRefreshGrantsAction } from "@/app/admin/_lib/actions";
import { ConfirmAction } from "@/components/admin/confirm";
import { actionsColumn, type Column } from "@/components/admin/data-table";
import { button, Card, DateText, Mono } from "@/components/admin/ui";
import { HolderLink, HolderTable } from "./shared";
import type { RefreshGrant, TokenHolder, TokenPage } from "./types";

const columns: Column<RefreshGrant>[] = [
  {
    header: "Client",
    className: "min-w-[10rem]",
    cell: (grant) => <HolderLink filter="client" value={grant.clientId} label="client ID" hash="#refresh-grants" />,
  },
  {
    header: "Account",
    className: "min-w-[10rem]",
    cell: (grant) => (
      <>
        <HolderLink filter="account" value={grant.accountId} label="account" hash="#refresh-grants" />
        <span className="block text-xs text-slate-500">via {grant.connector}</span>
      </>
    ),
  },
  { header: "Scope", hideBelow: "lg", cell: (grant) => grant.scope },
  { header: "Issued", hideBelow: "md", cell: (grant) => <DateText date={grant.grantedAt} /> },
  {
    header: "Last used",
    hideBelow: "md",
    cell: (grant) =>
      grant.lastUsedAt ? (
        <>
          <DateText date={grant.lastUsedAt} />
          <span className="block text-xs text-slate-500">{grant.rotations === 1 ? "1 use" : `${grant.rotations} uses`}</span>
        </>
      ) : (
        "Never"
      ),
  },
  {
    header: "Expires",
    cell: (grant) => (
      <>
        <DateText date={grant.expiresAt} />
        <span className="block text-xs text-slate-500">
          if unused; at the latest <DateText date={grant.familyExpiresAt} withTime={false} />
        </span>
      </>
    ),
  },
  actionsColumn((grant) => (
    <ConfirmAction
      action={revokeRefreshGrantsAction}
      fields={{ familyId: grant.familyId }}
      trigger="Revoke"
      triggerLabel={`Revoke refresh grant ${grant.familyId}`}
      title="Revoke this refresh grant?"
      confirmLabel="Revoke grant"
      pendingLabel="Revoking…"
    >
      The refresh token of <Mono>{grant.accountId}</Mono> for <Mono>{grant.clientId}</Mono> stops working at once, with the access tokens
      issued from it. The application must sign in again.
    </ConfirmAction>
  )),
];

export function RefreshGrants({ grants, holder }: { grants: TokenPage<RefreshGrant>; holder: TokenHolder }) {
  const { target, scope } = holder;
  return (
    <Card
      id="refresh-grants"
      title="Refresh grants"
      description="Refresh tokens that can still be used (offline_access), one row per login: each use replaces the token. Revoking a grant also revokes the access tokens issued with it."
      actions={
        (target.clientId || target.accountId) && grants.total > 0 ? (
          <ConfirmAction
            action={revokeRefreshGrantsAction}
            fields={target}
            trigger={`Revoke refresh grants (${grants.total})`}
            triggerClassName={button.danger}
            title={`Revoke every refresh grant of ${scope}?`}
            confirmLabel="Revoke refresh grants"
            pendingLabel="Revoking…"
          >
            Every refresh grant of {scope} ({grants.total}) is revoked, with the access tokens issued from them. Applications must sign in
            again.
          </ConfirmAction>
        ) : undefined
      }
    >
      <HolderTable
        title="Refresh grants"
        columns={columns}
        rows={grants}
        rowKey={(grant) => grant.familyId}
        holder={holder}
        empty={{
          what: "refresh grants",
          filterWhat: "refresh grants",
          hint: "A grant appears here when a client allowed refresh tokens gets one with the offline_access scope, until it expires or is revoked.",
        }}
      />
    </Card>
  );
}
