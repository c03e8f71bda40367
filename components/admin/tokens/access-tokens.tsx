/**
 * The Tokens page's active access tokens: one row each, newest first, each revocable, with the paging
 * links. A vehicle token shows its vehicle (asset DID) and privileges.
 */
import { revokeTokensAction } from "@/app/admin/_lib/actions";
import { ConfirmAction } from "@/components/admin/confirm";
import { actionsColumn, type Column } from "@/components/admin/data-table";
import { CopyableId } from "@/components/admin/id";
import { DateText, Mono } from "@/components/admin/ui";
import { HolderLink, HolderTable } from "./shared";
import type { ActiveToken, TokenHolder, TokenPage } from "./types";

const columns: Column<ActiveToken>[] = [
  {
    header: "Token ID (jti)",
    className: "min-w-[10rem]",
    cell: (token) => <CopyableId value={token.jti} label={`token ID ${token.jti}`} truncate />,
  },
  {
    header: "Client",
    className: "min-w-[10rem]",
    cell: (token) => <HolderLink filter="client" value={token.clientId} label="client ID" />,
  },
  {
    header: "Account",
    className: "min-w-[10rem]",
    cell: (token) => <HolderLink filter="account" value={token.userId} label="account" />,
  },
  {
    header: "Vehicle",
    hideBelow: "md",
    className: "min-w-[10rem]",
    cell: (token) =>
      token.vehicle ? (
        <>
          <CopyableId value={token.vehicle} label={`vehicle ${token.vehicle}`} truncate />
          <ul aria-label="Privileges" className="mt-1 text-xs text-slate-500">
            {token.privileges.map((privilege) => (
              <li key={privilege.id}>{privilege.name}</li>
            ))}
          </ul>
        </>
      ) : (
        <span className="text-slate-400">—</span>
      ),
  },
  { header: "Via", hideBelow: "lg", cell: (token) => token.connector },
  { header: "Scope", hideBelow: "lg", cell: (token) => token.scope },
  { header: "Issued", hideBelow: "md", cell: (token) => <DateText date={token.issuedAt} /> },
  { header: "Expires", cell: (token) => <DateText date={token.expiresAt} /> },
  actionsColumn((token) => (
    <ConfirmAction
      action={revokeTokensAction}
      fields={{ jti: token.jti }}
      trigger="Revoke"
      triggerLabel={`Revoke token ${token.jti}`}
      title="Revoke this token?"
      confirmLabel="Revoke token"
      pendingLabel="Revoking…"
      subject={token.jti}
    >
      The token of <Mono>{token.userId}</Mono> for <Mono>{token.clientId}</Mono> stops working at once.
    </ConfirmAction>
  )),
];

export function AccessTokens({ tokens, holder }: { tokens: TokenPage<ActiveToken>; holder: TokenHolder }) {
  return (
    <HolderTable
      title={holder.vehicleOnly ? "Active vehicle tokens" : "Active tokens"}
      columns={columns}
      rows={tokens}
      rowKey={(token) => token.jti}
      holder={holder}
      empty={{
        what: "active tokens",
        filterWhat: "tokens",
        hint: "Tokens appear here when Flow A or the code flow issues them, until they expire or are revoked.",
      }}
    />
  );
}
