/** /admin/clients: every client, newest first, searchable by id or name, 20 to a page. */
import type { Metadata } from "next";
import Link from "next/link";
import { SearchableList } from "@/components/admin/searchable-list";
import { type Column, DataTable } from "@/components/admin/data-table";
import { CopyableId } from "@/components/admin/id";
import { Badge, Banner, button, DateText, Mono, PageHeader } from "@/components/admin/ui";
import { parseSearch } from "@/lib/admin/filters";
import { listClients } from "@/lib/admin/operations";
import type { ClientSummaryRow } from "@/lib/store/contract";
import { adminPage, pageNumber, param, type SearchParams } from "../../_lib/guard";

export const metadata: Metadata = { title: "Clients" };

const columns: Column<ClientSummaryRow>[] = [
  {
    header: "Name",
    className: "font-medium",
    cell: (client) => (
      <Link href={`/admin/clients/${encodeURIComponent(client.id)}`} className="text-indigo-700 hover:underline">
        {client.name}
      </Link>
    ),
  },
  { header: "Client ID", cell: (client) => <CopyableId value={client.id} label={`client ID ${client.id}`} truncate /> },
  { header: "Status", cell: (client) => (client.enabled ? <Badge tone="green">Enabled</Badge> : <Badge tone="red">Disabled</Badge>) },
  { header: "Redirect URIs", hideBelow: "md", className: "tabular-nums", cell: (client) => client.redirectUriCount },
  { header: "Active signers", hideBelow: "md", className: "tabular-nums", cell: (client) => client.activeSignerCount },
  { header: "Created", hideBelow: "lg", cell: (client) => <DateText date={client.createdAt} withTime={false} /> },
];

export default async function ClientsPage({ searchParams }: { searchParams: SearchParams }) {
  const { k, admin } = await adminPage();
  const query = await searchParams;
  // Read as the management API reads ?search= (lib/admin/filters.ts): text that cannot be one gets an error, not a query.
  const { values, search: valid, errors } = parseSearch((name) => param(query[name]), "q");
  const search = values.search;
  const deleted = param(query.deleted);
  const result = errors.search
    ? { items: [], total: 0, page: 1, pageSize: 20 }
    : await listClients(k, admin, { search: valid, page: pageNumber(query.page) });

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
        <DataTable
          caption="Clients"
          columns={columns}
          rows={result.items}
          rowKey={(client) => client.id}
          rowClassName="hover:bg-slate-50"
        />
      </SearchableList>
    </>
  );
}
