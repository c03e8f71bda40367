/**
 * /admin/accounts/[accountId]: one account. Its identities (wallets, Google, Apple, passkeys),
 * linked wallets, live login sessions (revoke one or all), what it holds (links to the Tokens
 * page), block / unblock (which revokes everything at once), and delete.
 */
import type { Metadata } from "next";
import Link from "next/link";
import { notFound } from "next/navigation";
import { getAddress, isAddress } from "viem";
import { ConfirmAction } from "@/components/admin/confirm";
import { DeleteCard } from "@/components/admin/delete-card";
import { ActionForm, SubmitButton } from "@/components/admin/form";
import { CopyableId, identityLabel } from "@/components/admin/id";
import { Table, td, th } from "@/components/admin/data-table";
import { Badge, Banner, button, Card, DateText, EmptyState, Mono, PageHeader } from "@/components/admin/ui";
import { getAccount } from "@/lib/admin/operations";
import { blockAccountAction, deleteAccountAction, revokeSessionsAction, unblockAccountAction } from "../../../_lib/actions";
import { adminPage } from "../../../_lib/guard";

type Params = Promise<{ accountId: string }>;

const accountIdSegment = (segment: string) => {
  try {
    const value = decodeURIComponent(segment);
    return isAddress(value, { strict: false }) ? getAddress(value) : undefined;
  } catch {
    return undefined;
  }
};

export async function generateMetadata({ params }: { params: Params }): Promise<Metadata> {
  return { title: `Account ${accountIdSegment((await params).accountId) ?? "not found"}` };
}

export default async function AccountPage({ params }: { params: Params }) {
  const { k, admin } = await adminPage();
  const accountId = accountIdSegment((await params).accountId);
  const account = accountId === undefined ? undefined : await getAccount(k, admin, accountId);
  if (!account) notFound();
  const id = { accountId: account.id };
  const tokensHref = `/admin/tokens?${new URLSearchParams({ account: account.id })}`;
  const emails = [...new Set(account.identities.map((i) => i.email).filter(Boolean))];

  return (
    <>
      <PageHeader
        title={emails[0] ?? "Account"}
        breadcrumb={
          <Link href="/admin/accounts" className="hover:underline">
            Accounts
          </Link>
        }
        description={
          <span className="flex flex-wrap items-center gap-2">
            {account.blockedAt ? <Badge tone="red">Blocked</Badge> : <Badge tone="green">Active</Badge>}
            {(account.adminRole || account.configuredAdmin) && <Badge tone="indigo">Admin</Badge>}
            <span>
              Created <DateText date={account.createdAt} />
            </span>
          </span>
        }
        actions={
          account.blockedAt ? (
            <ActionForm action={unblockAccountAction} fields={[]} hidden={id} label="Unblock the account" className="contents">
              <SubmitButton pendingLabel="Unblocking…" className={button.secondary}>
                Unblock
              </SubmitButton>
            </ActionForm>
          ) : (
            <ConfirmAction
              action={blockAccountAction}
              fields={id}
              trigger="Block"
              triggerClassName={button.dangerOutline}
              title="Block this account?"
              confirmLabel="Block account"
              pendingLabel="Blocking…"
              subject={account.id}
            >
              <p className="mb-2 font-medium text-slate-900">This revokes everything it holds at once, on every instance:</p>
              <ul className="list-disc space-y-1 pl-5">
                <li>its {account.sessions.length === 1 ? "login session" : `${account.sessions.length} login sessions`} (it is signed out everywhere);</li>
                <li>
                  its {account.holdings.accessTokens} active access token{account.holdings.accessTokens === 1 ? "" : "s"} (its linked wallets&apos; too) and{" "}
                  {account.holdings.refreshGrants} refresh grant{account.holdings.refreshGrants === 1 ? "" : "s"}, and any unredeemed code;
                </li>
                <li>no login is possible any more: hosted login, Flow A for its wallets, Continue as.</li>
              </ul>
              <p className="mt-2">Unblocking lets it log in again; nothing revoked comes back.</p>
            </ConfirmAction>
          )
        }
      />
      {account.blockedAt && (
        <Banner tone="error">
          Blocked since <DateText date={account.blockedAt} />: Keyfob refuses every login of this account and its wallets.
        </Banner>
      )}

      <div className="grid grid-cols-[minmax(0,1fr)] gap-6">
        <Card id="overview" title="Account">
          <dl className="grid gap-x-6 gap-y-3 text-sm sm:grid-cols-[10rem_minmax(0,1fr)]">
            <dt className="font-medium text-slate-600">Account ID</dt>
            <dd className="min-w-0">
              <CopyableId value={account.id} label="account ID" />
              <p className="mt-0.5 text-xs text-slate-500">The tokens&apos; user id (sub encodes it with the connector) and ethereum_address.</p>
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

        <Card id="identities" title="Identities" description="The ways into this account.">
          {account.identities.length === 0 ? (
            <p className="text-sm text-slate-600">None.</p>
          ) : (
            <Table
              caption="Identities"
              head={
                <tr>
                  <th className={th}>Kind</th>
                  <th className={th}>Identity</th>
                  <th className={`${th} hidden md:table-cell`}>Added</th>
                  <th className={th}>Last login</th>
                </tr>
              }
            >
              {account.identities.map((identity) => (
                <tr key={`${identity.provider}:${identity.subject}`}>
                  <td className={td}>
                    <Badge tone="slate">{identityLabel(identity.provider)}</Badge>
                  </td>
                  <td className={`${td} min-w-[12rem]`}>
                    {identity.email && (
                      <span className="block text-slate-800">
                        {identity.email}{" "}
                        {identity.emailVerified ? <Badge tone="green">verified</Badge> : <Badge tone="amber">unverified</Badge>}
                      </span>
                    )}
                    <CopyableId value={identity.subject} label={`${identityLabel(identity.provider)} subject`} />
                  </td>
                  <td className={`${td} hidden md:table-cell`}>
                    <DateText date={identity.createdAt} />
                  </td>
                  <td className={td}>
                    <DateText date={identity.lastLoginAt} />
                  </td>
                </tr>
              ))}
            </Table>
          )}
        </Card>

        <Card id="wallets" title="Wallets" description="Wallets that log into this account; Flow A tokens they get name the wallet.">
          {account.wallets.length === 0 ? (
            <p className="text-sm text-slate-600">No wallet: this account signs in with Google, Apple or a passkey. A wallet can be linked at /account.</p>
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

        <Card
          id="sessions"
          title="Login sessions"
          description="Browsers signed in to Keyfob as this account (prompt=none, Continue as). A revoked session ends at its next request, on every instance; tokens already issued are left alone."
          actions={
            account.sessions.length > 0 ? (
              <ConfirmAction
                action={revokeSessionsAction}
                fields={id}
                trigger={`Revoke all ${account.sessions.length}`}
                triggerClassName={button.dangerOutline}
                title="Revoke every login session of this account?"
                confirmLabel="Revoke all sessions"
                pendingLabel="Revoking…"
              >
                Every browser signed in as this account must log in again at its next authorization request. Its tokens are left alone: block the
                account, or revoke its tokens, to stop them too.
              </ConfirmAction>
            ) : undefined
          }
        >
          {account.sessions.length === 0 ? (
            <EmptyState title="No live sessions">Sessions appear when the account logs in on the hosted page, until they end or are revoked.</EmptyState>
          ) : (
            <Table
              caption="Live login sessions"
              head={
                <tr>
                  <th className={th}>Signed in</th>
                  <th className={th}>Last used</th>
                  <th className={`${th} hidden md:table-cell`}>Ends</th>
                  <th className={`${th} hidden lg:table-cell`}>From</th>
                  <th className={th}>
                    <span className="sr-only">Actions</span>
                  </th>
                </tr>
              }
            >
              {account.sessions.map((session) => (
                <tr key={session.id}>
                  <td className={`${td} min-w-[11rem]`}>
                    <DateText date={session.authTime} /> <span className="text-slate-500">via {identityLabel(session.connector)}</span>
                    <span className="mt-0.5 block text-xs text-slate-500">
                      <CopyableId value={session.id} label="session ID">
                        <Mono className="text-xs text-slate-500">{`${session.id.slice(0, 12)}…`}</Mono>
                      </CopyableId>
                    </span>
                  </td>
                  <td className={td}>
                    <DateText date={session.lastSeenAt} />
                  </td>
                  <td className={`${td} hidden md:table-cell`}>
                    <DateText date={session.expiresAt} />
                  </td>
                  <td className={`${td} hidden max-w-[20rem] lg:table-cell`}>
                    {session.ip ? <Mono>{session.ip}</Mono> : <span className="text-slate-400">—</span>}
                    {session.userAgent && <span className="block truncate text-xs text-slate-500" title={session.userAgent}>{session.userAgent}</span>}
                  </td>
                  <td className={`${td} text-right`}>
                    <ConfirmAction
                      action={revokeSessionsAction}
                      fields={{ ...id, sessionId: session.id }}
                      trigger="Revoke"
                      triggerLabel={`Revoke the session signed in via ${session.connector}, ${session.id.slice(0, 12)}`}
                      title="Revoke this session?"
                      confirmLabel="Revoke session"
                      pendingLabel="Revoking…"
                    >
                      This browser must log in again at its next authorization request. Tokens already issued are left alone.
                    </ConfirmAction>
                  </td>
                </tr>
              ))}
            </Table>
          )}
        </Card>

        <DeleteCard
          title="Delete account"
          summary="Deletes the account with its identities and sessions, and revokes its tokens. Its audit events stay. To keep someone out, block instead: a deleted identity that signs in again gets a new, empty account."
          action={deleteAccountAction}
          fields={id}
          question="Delete this account?"
          typeToConfirm={{ value: account.id, label: "the account's address", ignoreCase: true }}
        >
          Its identities, linked wallets and sessions are deleted, its access and refresh tokens revoked, and its admin role removed. This cannot
          be undone.
        </DeleteCard>
      </div>
    </>
  );
}
