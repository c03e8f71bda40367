/** /admin/clients: every client, newest first, searchable by id or name, 20 to a page. */
import type { Metadata } from "next";
import Link from "next/link";
import { SearchableList } from "@/components/admin/searchable-list";
import { Badge, Banner, button, DateText, Mono, PageHeader, Table, td, th } from "@/components/admin/ui";
import { parseSearch } from "@/lib/admin/filters";
import { listClients } from "@/lib/admin/operations";
import { adminPage, pageNumber, param, type SearchParams } from "../../_lib/guard";

export const metadata: Metadata = { title: "Clients" };

export default async function ClientsPage({ searchParams }: { searchParams: SearchParams }) {
  const { k, admin } = await adminPage();
  const query = await searchParams;
  // Read as the management API reads ?search= (lib/admin/filters.ts): text that cannot be one gets an error, not a query.
  const { values, search: valid, errors } = parseSearch((name) => param(query[name]), "q");
  const search = values.search;
  const deleted = param(query.deleted);
  const result = errors.search ? { items: [], total: 0, page: 1, pageSize: 20 } : await listClients(k, admin, { search: valid, page: pageNumber(query.page) });

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
      <SearchableList
        path="/admin/clients"
        plural="clients"
        search={search}
        error={errors.search}
        result={result}
        searchBox={{ id: "client-search", label: "Search clients by id or name", placeholder: "Search by client id or name" }}
        searchHint="The search looks for the text anywhere in a client’s id or name, in any case."
        none={{
          hint: "Register an application (a developer license address, or any id) to let it get tokens.",
          action: (
            <Link href="/admin/clients/new" className={button.primary}>
              Register the first client
            </Link>
          ),
        }}
      >
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
      </SearchableList>
    </>
  );
}
