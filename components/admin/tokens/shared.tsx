/** What both lists of the Tokens page have alike: a holder's id linking to its own tokens, the table with its empty state and paging. */
import Link from "next/link";
import { CopyableId } from "@/components/admin/id";
import { type Column, DataTable } from "@/components/admin/data-table";
import { EmptyState, Mono, Pagination } from "@/components/admin/ui";
import type { TokenHolder, TokenPage } from "./types";

/** A client id or account address to copy, linking to the Tokens page filtered to it (at `hash`: the list it is in). */
export function HolderLink({
  filter,
  value,
  label,
  hash = "",
}: {
  filter: "client" | "account";
  value: string;
  label: string;
  hash?: string;
}) {
  return (
    <CopyableId value={value} label={label} truncate>
      <Link className="hover:underline" href={`/admin/tokens?${new URLSearchParams({ [filter]: value })}${hash}`}>
        <Mono>{value}</Mono>
      </Link>
    </CopyableId>
  );
}

/**
 * One of the page's lists: its rows of the holder shown, the empty state that fits (the filter to
 * correct, or nothing of the holder's: "No active tokens for client …"), and the paging links.
 */
export function HolderTable<Row>({
  title,
  columns,
  rows,
  rowKey,
  holder,
  empty,
}: {
  /** What the list holds ("Active tokens"), its caption with " of client …" when filtered. */
  title: string;
  columns: readonly Column<Row>[];
  rows: TokenPage<Row>;
  rowKey: (row: Row) => string;
  holder: TokenHolder;
  /** The empty state's words: what there is none of, what the filter would show, and when rows appear. */
  empty: { what: string; filterWhat: string; hint: string };
}) {
  const { invalid, scope } = holder;
  return (
    <>
      <DataTable
        caption={scope ? `${title} of ${scope}` : title}
        columns={columns}
        rows={rows.items}
        rowKey={rowKey}
        empty={
          <EmptyState
            title={invalid ? `Correct the filter to see ${empty.filterWhat}` : scope ? `No ${empty.what} for ${scope}` : `No ${empty.what}`}
          >
            {invalid ? undefined : empty.hint}
          </EmptyState>
        }
      />
      <Pagination page={rows.page} pageSize={rows.pageSize} total={rows.total} href={rows.href} />
    </>
  );
}
