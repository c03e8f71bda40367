/**
 * /admin/tokens: active (unexpired, unrevoked) grants, for a client and/or an account, newest
 * first. Revoke one, or every active token of the client or account shown.
 */
import type { Metadata } from "next";
import Link from "next/link";
import { getAddress, isAddress } from "viem";
import { ConfirmAction } from "@/components/admin/confirm";
import { button, Card, DateText, EmptyState, inputClass, Mono, PageHeader, Pagination, Table, td, th } from "@/components/admin/ui";
import { listActiveTokens } from "@/lib/admin/operations";
import { revokeTokensAction } from "../../_lib/actions";
import { adminPage, pageNumber, param, type SearchParams } from "../../_lib/guard";

export const metadata: Metadata = { title: "Tokens" };

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;

export default async function TokensPage({ searchParams }: { searchParams: SearchParams }) {
  const { k, admin } = await adminPage();
  const query = await searchParams;
  const clientInput = param(query.client);
  const accountInput = param(query.account);
  const accountError = accountInput && !ADDRESS.test(accountInput) ? "Must be a 0x-prefixed 20-byte hex address." : undefined;
  const clientId = clientInput && isAddress(clientInput, { strict: false }) ? getAddress(clientInput) : clientInput;
  const accountId = accountInput && !accountError ? getAddress(accountInput) : undefined;

  const result = accountError
    ? { items: [], total: 0, page: 1, pageSize: 20 }
    : await listActiveTokens(k, admin, { clientId: clientId || undefined, accountId, page: pageNumber(query.page) });
  const filter = { ...(clientId && { client: clientId }), ...(accountId && { account: accountId }) };
  const href = (page: number) => `/admin/tokens?${new URLSearchParams({ ...filter, page: String(page) })}`;
  const target = { ...(clientId && { clientId }), ...(accountId && { accountId }) };
  const scope = [clientId && `client ${clientId}`, accountId && `account ${accountId}`].filter(Boolean).join(" and ");

  return (
    <>
      <PageHeader
        title="Tokens"
        description="Active access tokens: issued, not expired and not revoked. Revoked tokens fail introspection and userinfo at once."
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
              Every active token of {scope} ({result.total}) is revoked. Applications must sign in again to get new ones.
            </ConfirmAction>
          ) : undefined
        }
      />
      <Card>
        <form action="/admin/tokens" className="mb-5 grid gap-3 sm:grid-cols-[1fr_1fr_auto] sm:items-end" aria-label="Filter tokens">
          <div>
            <label htmlFor="tokens-client" className="mb-1 block text-sm font-medium text-slate-800">
              Client ID
            </label>
            <input id="tokens-client" name="client" defaultValue={clientInput} className={inputClass} autoComplete="off" spellCheck={false} placeholder="Any client" />
          </div>
          <div>
            <label htmlFor="tokens-account" className="mb-1 block text-sm font-medium text-slate-800">
              Account address
            </label>
            <input
              id="tokens-account"
              name="account"
              defaultValue={accountInput}
              className={inputClass}
              autoComplete="off"
              spellCheck={false}
              placeholder="Any account (0x…)"
              aria-invalid={accountError ? true : undefined}
              aria-describedby={accountError ? "tokens-account-error" : undefined}
            />
            {accountError && (
              <p id="tokens-account-error" className="mt-1 text-sm font-medium text-red-700">
                {accountError}
              </p>
            )}
          </div>
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
          <EmptyState title={accountError ? "Correct the account address to see its tokens" : scope ? `No active tokens for ${scope}` : "No active tokens"}>
            {accountError ? undefined : "Tokens appear here when Flow A or the code flow issues them, until they expire or are revoked."}
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
                <td className={td}>
                  <Mono>{token.jti}</Mono>
                </td>
                <td className={td}>
                  <Link className="hover:underline" href={`/admin/tokens?${new URLSearchParams({ client: token.clientId })}`}>
                    <Mono>{token.clientId}</Mono>
                  </Link>
                </td>
                <td className={td}>
                  <Link className="hover:underline" href={`/admin/tokens?${new URLSearchParams({ account: token.userId })}`}>
                    <Mono>{token.userId}</Mono>
                  </Link>
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
                  >
                    <p className="mb-2">
                      <Mono>{token.jti}</Mono>
                    </p>
                    The token of <Mono>{token.userId}</Mono> for <Mono>{token.clientId}</Mono> stops working at once.
                  </ConfirmAction>
                </td>
              </tr>
            ))}
          </Table>
        )}
        <Pagination page={result.page} pageSize={result.pageSize} total={result.total} href={href} />
      </Card>
    </>
  );
}
