/** /admin/clients: every client, newest first, searchable by id or name, 20 to a page. */
import type { Metadata } from "next";
import Link from "next/link";
import { Badge, Banner, button, DateText, EmptyState, inputClass, Mono, PageHeader, Pagination, Table, td, th } from "@/components/admin/ui";
import { listClients } from "@/lib/admin/operations";
import { adminPage, pageNumber, param, type SearchParams } from "../../_lib/guard";

export const metadata: Metadata = { title: "Clients" };

export default async function ClientsPage({ searchParams }: { searchParams: SearchParams }) {
  const { k, admin } = await adminPage();
  const query = await searchParams;
  const search = param(query.q);
  const deleted = param(query.deleted);
  const result = await listClients(k, admin, { search, page: pageNumber(query.page) });
  const href = (page: number) => `/admin/clients?${new URLSearchParams({ ...(search && { q: search }), page: String(page) })}`;

  return (
    <>
      <PageHeader
        title="Clients"
        description="Applications that get tokens from Keyfob: their redirect URIs, signers and secrets."
        actions={
          <Link href="/admin/clients/new" className={button.primary}>
            New client
          </Link>
        }
      />
      {deleted && (
        <Banner tone="success">
          Client <Mono>{deleted}</Mono> was deleted.
        </Banner>
      )}
      <form role="search" action="/admin/clients" className="mb-5 flex max-w-xl gap-2">
        <label htmlFor="client-search" className="sr-only">
          Search clients by id or name
        </label>
        <input id="client-search" name="q" type="search" defaultValue={search} placeholder="Search by client id or name" className={inputClass} />
        <button type="submit" className={button.secondary}>
          Search
        </button>
      </form>

      {result.items.length === 0 ? (
        search ? (
          <EmptyState
            title={`No clients match “${search}”`}
            action={
              <Link href="/admin/clients" className={button.secondary}>
                Clear the search
              </Link>
            }
          >
            The search looks for the text anywhere in a client’s id or name, in any case.
          </EmptyState>
        ) : result.total > 0 ? (
          <EmptyState title="No clients on this page" action={<Link href="/admin/clients" className={button.secondary}>Go to the first page</Link>} />
        ) : (
          <EmptyState
            title="No clients yet"
            action={
              <Link href="/admin/clients/new" className={button.primary}>
                Register the first client
              </Link>
            }
          >
            Register an application (a developer license address, or any id) to let it get tokens.
          </EmptyState>
        )
      ) : (
        <div className="rounded-xl bg-white px-4 py-2 shadow-xs ring-1 ring-slate-200 sm:px-5">
          <Table
            caption="Clients"
            head={
              <tr>
                <th className={th}>Name</th>
                <th className={th}>Client ID</th>
                <th className={th}>Status</th>
                <th className={`${th} hidden md:table-cell`}>Redirect URIs</th>
                <th className={`${th} hidden md:table-cell`}>Active signers</th>
                <th className={`${th} hidden lg:table-cell`}>Created</th>
              </tr>
            }
          >
            {result.items.map((client) => (
              <tr key={client.id} className="hover:bg-slate-50">
                <td className={`${td} font-medium`}>
                  <Link href={`/admin/clients/${encodeURIComponent(client.id)}`} className="text-indigo-700 hover:underline">
                    {client.name}
                  </Link>
                </td>
                <td className={td}>
                  <Mono>{client.id}</Mono>
                </td>
                <td className={td}>{client.enabled ? <Badge tone="green">Enabled</Badge> : <Badge tone="red">Disabled</Badge>}</td>
                <td className={`${td} hidden tabular-nums md:table-cell`}>{client._count.redirectUris}</td>
                <td className={`${td} hidden tabular-nums md:table-cell`}>{client._count.signers}</td>
                <td className={`${td} hidden lg:table-cell`}>
                  <DateText date={client.createdAt} withTime={false} />
                </td>
              </tr>
            ))}
          </Table>
        </div>
      )}
      <Pagination page={result.page} pageSize={result.pageSize} total={result.total} href={href} />
    </>
  );
}
