/**
 * /admin/tokens: active (unexpired, unrevoked) access tokens, for a client and/or an account,
 * newest first, and the live refresh-token grants (one row per family) below them. Revoke one, or
 * every active token or refresh grant of the client or account shown.
 */
import type { Metadata } from "next";
import Link from "next/link";
import { ConfirmAction } from "@/components/admin/confirm";
import { FilterField, filterControl } from "@/components/admin/filter-field";
import { CopyableId } from "@/components/admin/id";
import { Table, td, th } from "@/components/admin/data-table";
import { button, Card, DateText, EmptyState, Mono, PageHeader, Pagination } from "@/components/admin/ui";
import { parseHolderQuery } from "@/lib/admin/filters";
import { listActiveTokens, listRefreshGrants } from "@/lib/admin/operations";
import { normalizeClientId } from "@/lib/clients/registry";
import { revokeRefreshGrantsAction, revokeTokensAction } from "../../_lib/actions";
import { adminPage, pageNumber, param, type SearchParams } from "../../_lib/guard";

export const metadata: Metadata = { title: "Tokens" };

export default async function TokensPage({ searchParams }: { searchParams: SearchParams }) {
  const { k, admin } = await adminPage();
  const query = await searchParams;
  // The same reading as the management API's (lib/admin/filters.ts): a field that cannot be a filter gets its error and no list.
  const { values, filter: parsed, errors } = parseHolderQuery((name) => param(query[name]));
  const clientInput = values.client;
  const accountInput = values.account;
  const invalid = Object.keys(errors).length > 0;
  const clientId = parsed.clientId && normalizeClientId(parsed.clientId);
  const accountId = parsed.accountId;

  const [result, grants] = invalid
    ? [
        { items: [], total: 0, page: 1, pageSize: 20 },
        { items: [], total: 0, page: 1, pageSize: 20 },
      ]
    : await Promise.all([
        listActiveTokens(k, admin, { clientId, accountId, page: pageNumber(query.page) }),
        listRefreshGrants(k, admin, { clientId, accountId, page: pageNumber(query.rpage) }),
      ]);
  const filter = { ...(clientId && { client: clientId }), ...(accountId && { account: accountId }) };
  const href = (page: number) => `/admin/tokens?${new URLSearchParams({ ...filter, page: String(page), rpage: String(grants.page) })}`;
  const grantsHref = (page: number) => `/admin/tokens?${new URLSearchParams({ ...filter, page: String(result.page), rpage: String(page) })}#refresh-grants`;
  const target = { ...(clientId && { clientId }), ...(accountId && { accountId }) };
  const scope = [clientId && `client ${clientId}`, accountId && `account ${accountId}`].filter(Boolean).join(" and ");

  return (
    <>
      <PageHeader
        title="Tokens"
        description={
          <>
            Active access tokens (issued, not expired, not revoked) and refresh grants. Revoked tokens fail introspection and userinfo at once. An
            account&apos;s tokens include its linked wallets&apos; Flow A tokens.
            {accountId && (
              <>
                {" "}
                <Link className="text-indigo-700 hover:underline" href={`/admin/accounts/${accountId}`}>
                  Open the account
                </Link>
              </>
            )}
          </>
        }
        actions={
          (clientId || accountId) && result.total > 0 ? (
            <ConfirmAction
              action={revokeTokensAction}
              fields={target}
              trigger={`Revoke all ${result.total}`}
              triggerClassName={button.danger}
              title={`Revoke all active tokens of ${scope}?`}
              confirmLabel="Revoke all"
              pendingLabel="Revoking…"
            >
              Every active access token of {scope} ({result.total}) is revoked. Refresh grants are not: an application holding one gets new tokens
              with it unless its refresh grants (below) are revoked too.
            </ConfirmAction>
          ) : undefined
        }
      />
      <Card>
        <form action="/admin/tokens" className="mb-5 grid gap-3 sm:grid-cols-[1fr_1fr_auto] sm:items-end" aria-label="Filter tokens">
          <FilterField id="tokens-client" title="Client ID" error={errors.client}>
            <input {...filterControl("tokens-client", "client", clientInput, errors.client)} autoComplete="off" spellCheck={false} placeholder="Any client" />
          </FilterField>
          <FilterField id="tokens-account" title="Account address" error={errors.account}>
            <input {...filterControl("tokens-account", "account", accountInput, errors.account)} autoComplete="off" spellCheck={false} placeholder="Any account (0x…)" />
          </FilterField>
          <div className="flex gap-2">
            <button type="submit" className={button.secondary}>
              Show
            </button>
            {(clientInput || accountInput) && (
              <Link href="/admin/tokens" className={button.secondary}>
                Clear
              </Link>
            )}
          </div>
        </form>

        {result.items.length === 0 ? (
          <EmptyState title={invalid ? "Correct the filter to see tokens" : scope ? `No active tokens for ${scope}` : "No active tokens"}>
            {invalid ? undefined : "Tokens appear here when Flow A or the code flow issues them, until they expire or are revoked."}
          </EmptyState>
        ) : (
          <Table
            caption={scope ? `Active tokens of ${scope}` : "Active tokens"}
            head={
              <tr>
                <th className={th}>Token ID (jti)</th>
                <th className={th}>Client</th>
                <th className={th}>Account</th>
                <th className={`${th} hidden lg:table-cell`}>Via</th>
                <th className={`${th} hidden lg:table-cell`}>Scope</th>
                <th className={`${th} hidden md:table-cell`}>Issued</th>
                <th className={th}>Expires</th>
                <th className={th}>
                  <span className="sr-only">Actions</span>
                </th>
              </tr>
            }
          >
            {result.items.map((token) => (
              <tr key={token.jti}>
                <td className={`${td} min-w-[10rem]`}>
                  <CopyableId value={token.jti} label={`token ID ${token.jti}`} />
                </td>
                <td className={`${td} min-w-[10rem]`}>
                  <CopyableId value={token.clientId} label="client ID">
                    <Link className="hover:underline" href={`/admin/tokens?${new URLSearchParams({ client: token.clientId })}`}>
                      <Mono>{token.clientId}</Mono>
                    </Link>
                  </CopyableId>
                </td>
                <td className={`${td} min-w-[10rem]`}>
                  <CopyableId value={token.userId} label="account">
                    <Link className="hover:underline" href={`/admin/tokens?${new URLSearchParams({ account: token.userId })}`}>
                      <Mono>{token.userId}</Mono>
                    </Link>
                  </CopyableId>
                </td>
                <td className={`${td} hidden lg:table-cell`}>{token.connector}</td>
                <td className={`${td} hidden lg:table-cell`}>{token.scope}</td>
                <td className={`${td} hidden md:table-cell`}>
                  <DateText date={token.issuedAt} />
                </td>
                <td className={td}>
                  <DateText date={token.expiresAt} />
                </td>
                <td className={`${td} text-right`}>
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
                </td>
              </tr>
            ))}
          </Table>
        )}
        <Pagination page={result.page} pageSize={result.pageSize} total={result.total} href={href} />
      </Card>
      <div className="mt-6">
        <Card
          id="refresh-grants"
          title="Refresh grants"
          description="Refresh tokens that can still be used (offline_access), one row per login: each use replaces the token. Revoking a grant also revokes the access tokens issued with it."
          actions={
            (clientId || accountId) && grants.total > 0 ? (
              <ConfirmAction
                action={revokeRefreshGrantsAction}
                fields={target}
                trigger={`Revoke refresh grants (${grants.total})`}
                triggerClassName={button.danger}
                title={`Revoke every refresh grant of ${scope}?`}
                confirmLabel="Revoke refresh grants"
                pendingLabel="Revoking…"
              >
                Every refresh grant of {scope} ({grants.total}) is revoked, with the access tokens issued from them. Applications must sign in again.
              </ConfirmAction>
            ) : undefined
          }
        >
          {grants.items.length === 0 ? (
            <EmptyState title={invalid ? "Correct the filter to see refresh grants" : scope ? `No refresh grants for ${scope}` : "No refresh grants"}>
              {invalid ? undefined : "A grant appears here when a client allowed refresh tokens gets one with the offline_access scope, until it expires or is revoked."}
            </EmptyState>
          ) : (
            <Table
              caption={scope ? `Refresh grants of ${scope}` : "Refresh grants"}
              head={
                <tr>
                  <th className={th}>Client</th>
                  <th className={th}>Account</th>
                  <th className={`${th} hidden lg:table-cell`}>Scope</th>
                  <th className={`${th} hidden md:table-cell`}>Issued</th>
                  <th className={`${th} hidden md:table-cell`}>Last used</th>
                  <th className={th}>Expires</th>
                  <th className={th}>
                    <span className="sr-only">Actions</span>
                  </th>
                </tr>
              }
            >
              {grants.items.map((grant) => (
                <tr key={grant.familyId}>
                  <td className={`${td} min-w-[10rem]`}>
                    <CopyableId value={grant.clientId} label="client ID">
                      <Link className="hover:underline" href={`/admin/tokens?${new URLSearchParams({ client: grant.clientId })}#refresh-grants`}>
                        <Mono>{grant.clientId}</Mono>
                      </Link>
                    </CopyableId>
                  </td>
                  <td className={`${td} min-w-[10rem]`}>
                    <CopyableId value={grant.accountId} label="account">
                      <Link className="hover:underline" href={`/admin/tokens?${new URLSearchParams({ account: grant.accountId })}#refresh-grants`}>
                        <Mono>{grant.accountId}</Mono>
                      </Link>
                    </CopyableId>
                    <span className="block text-xs text-slate-500">via {grant.connector}</span>
                  </td>
                  <td className={`${td} hidden lg:table-cell`}>{grant.scope}</td>
                  <td className={`${td} hidden md:table-cell`}>
                    <DateText date={grant.grantedAt} />
                  </td>
                  <td className={`${td} hidden md:table-cell`}>
                    {grant.lastUsedAt ? (
                      <>
                        <DateText date={grant.lastUsedAt} />
                        <span className="block text-xs text-slate-500">{grant.rotations === 1 ? "1 use" : `${grant.rotations} uses`}</span>
                      </>
                    ) : (
                      "Never"
                    )}
                  </td>
                  <td className={td}>
                    <DateText date={grant.expiresAt} />
                    <span className="block text-xs text-slate-500">
                      if unused; at the latest <DateText date={grant.familyExpiresAt} withTime={false} />
                    </span>
                  </td>
                  <td className={`${td} text-right`}>
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
                  </td>
                </tr>
              ))}
            </Table>
          )}
          <Pagination page={grants.page} pageSize={grants.pageSize} total={grants.total} href={grantsHref} />
        </Card>
      </div>
    </>
  );
}
