/** The account page's live login sessions: one row each, revocable one by one or all at once. */
import { revokeSessionsAction } from "@/app/admin/_lib/actions";
import { ConfirmAction } from "@/components/admin/confirm";
import { actionsColumn, type Column, DataTable } from "@/components/admin/data-table";
import { CopyableId, identityLabel } from "@/components/admin/id";
import { button, Card, DateText, EmptyState, Mono } from "@/components/admin/ui";
import type { AdminAccount } from "./types";

type Session = AdminAccount["sessions"][number];

const columns = (accountId: string): Column<Session>[] => [
  {
    header: "Signed in",
    className: "min-w-[11rem]",
    cell: (session) => (
      <>
        <DateText date={session.authTime} /> <span className="text-slate-500">via {identityLabel(session.connector)}</span>
        <span className="mt-0.5 block text-xs text-slate-500">
          <CopyableId value={session.id} label="session ID">
            <Mono className="text-xs text-slate-500">{`${session.id.slice(0, 12)}…`}</Mono>
          </CopyableId>
        </span>
      </>
    ),
  },
  { header: "Last used", cell: (session) => <DateText date={session.lastSeenAt} /> },
  { header: "Ends", hideBelow: "md", cell: (session) => <DateText date={session.expiresAt} /> },
  {
    header: "From",
    hideBelow: "lg",
    className: "max-w-[20rem]",
    cell: (session) => (
      <>
        {session.ip ? <Mono>{session.ip}</Mono> : <span className="text-slate-400">—</span>}
        {session.userAgent && (
          <span className="block truncate text-xs text-slate-500" title={session.userAgent}>
            {session.userAgent}
          </span>
        )}
      </>
    ),
  },
  actionsColumn((session) => (
    <ConfirmAction
      action={revokeSessionsAction}
      fields={{ accountId, sessionId: session.id }}
      trigger="Revoke"
      triggerLabel={`Revoke the session signed in via ${session.connector}, ${session.id.slice(0, 12)}`}
      title="Revoke this session?"
      confirmLabel="Revoke session"
      pendingLabel="Revoking…"
    >
      This browser must log in again at its next authorization request. Tokens already issued are left alone.
    </ConfirmAction>
  )),
];

export function Sessions({ account }: { account: AdminAccount }) {
  return (
    <Card
      id="sessions"
      title="Login sessions"
      description="Browsers signed in to Keyfob as this account (prompt=none, Continue as). A revoked session ends at its next request, on every instance; tokens already issued are left alone."
      actions={
        account.sessions.length > 0 ? (
          <ConfirmAction
            action={revokeSessionsAction}
            fields={{ accountId: account.id }}
            trigger={`Revoke all ${account.sessions.length}`}
            triggerClassName={button.dangerOutline}
            title="Revoke every login session of this account?"
            confirmLabel="Revoke all sessions"
            pendingLabel="Revoking…"
          >
            Every browser signed in as this account must log in again at its next authorization request. Its tokens are left alone: block
            the account, or revoke its tokens, to stop them too.
          </ConfirmAction>
        ) : undefined
      }
    >
      <DataTable
        caption="Live login sessions"
        columns={columns(account.id)}
        rows={account.sessions}
        rowKey={(session) => session.id}
        empty={
          <EmptyState title="No live sessions">
            Sessions appear when the account logs in on the hosted page, until they end or are revoked.
          </EmptyState>
        }
      />
    </Card>
  );
}
