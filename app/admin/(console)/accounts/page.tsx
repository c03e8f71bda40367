/** /admin/accounts: end users' accounts, newest first, found by address (its own or a linked wallet's), email or id. */
import type { Metadata } from "next";
import Link from "next/link";
import { CopyableId, identityLabel } from "@/components/admin/id";
import { SearchableList } from "@/components/admin/searchable-list";
import { type Column, DataTable } from "@/components/admin/data-table";
import { Badge, Banner, DateText, Mono, PageHeader } from "@/components/admin/ui";
import { parseSearch } from "@/lib/admin/filters";
import { listAccounts } from "@/lib/admin/operations";
import type { AccountView } from "@/lib/store/contract";
import { adminPage, pageNumber, param, type SearchParams } from "../../_lib/guard";

export const metadata: Metadata = { title: "Accounts" };

const columns: Column<AccountView>[] = [
  {
    header: "Account",
    cell: (account) => (
      <CopyableId value={account.id} label={`account ${account.id}`} truncate>
        <Link href={`/admin/accounts/${account.id}`} className="font-mono text-[13px] wrap-anywhere text-indigo-700 hover:underline">
          {account.id}
        </Link>
      </CopyableId>
    ),
  },
  {
    header: "Identities",
    cell: (account) => (
      <ul className="flex flex-col gap-1">
        {account.identities.map((identity) => (
          <li key={`${identity.provider}:${identity.subject}`} className="flex min-w-0 flex-wrap items-center gap-1.5">
            <Badge tone="slate">{identityLabel(identity.provider)}</Badge>
            <span className="min-w-0 text-sm wrap-anywhere text-slate-700">
              {identity.email ?? (identity.provider === "web3" ? identity.subject : "")}
            </span>
          </li>
        ))}
        {account.identities.length === 0 && <li className="text-slate-400">—</li>}
      </ul>
    ),
  },
  { header: "Status", cell: (account) => (account.blockedAt ? <Badge tone="red">Blocked</Badge> : <Badge tone="green">Active</Badge>) },
  { header: "Created", hideBelow: "md", cell: (account) => <DateText date={account.createdAt} withTime={false} /> },
];

export default async function AccountsPage({ searchParams }: { searchParams: SearchParams }) {
  const { k, admin } = await adminPage();
  const query = await searchParams;
  // Read as the management API reads ?search= (lib/admin/filters.ts): text that cannot be one gets an error, not a query.
  const { values, search: valid, errors } = parseSearch((name) => param(query[name]), "q");
  const search = values.search;
  const deleted = param(query.deleted);
  const result = errors.search
    ? { items: [], total: 0, page: 1, pageSize: 20 }
    : await listAccounts(k, admin, { search: valid, page: pageNumber(query.page) });

  return (
    <>
      <PageHeader
        title="Accounts"
        description="People who signed in: a wallet's own account, or one Keyfob made for a Google, Apple or passkey login. Block, revoke sessions, delete."
      />
      {deleted && /^0x[0-9a-fA-F]{40}$/.test(deleted) && (
        <Banner tone="success">
          Account <Mono>{deleted}</Mono> was deleted.
        </Banner>
      )}
      <SearchableList
        path="/admin/accounts"
        plural="accounts"
        search={search}
        error={errors.search}
        result={result}
        searchBox={{
          id: "account-search",
          label: "Search accounts by address, email or id",
          placeholder: "Address (0x…), email, or part of an id",
          autoComplete: "off",
          spellCheck: false,
        }}
        searchHint="An address finds the account of that address or of a wallet linked to it; an email, accounts with that email (any case); other text is looked for in ids, subjects and emails."
        none={{ hint: "Accounts appear when people first sign in through the hosted login or Flow A." }}
      >
        <DataTable
          caption={search ? `Accounts matching ${search}` : "Accounts"}
          columns={columns}
          rows={result.items}
          rowKey={(account) => account.id}
          rowClassName="hover:bg-slate-50"
        />
      </SearchableList>
    </>
  );
}
