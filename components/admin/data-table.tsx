/**
 * The dashboard's tables. `DataTable` is the one to use: the columns say their header and how a
 * row fills their cell, and the table scrolls sideways on narrow screens, hides the columns that
 * only fit wider ones, and shows its empty state when there are no rows. `Table` and `ColumnHeaders`
 * are its parts, for a body that is more than one row per item (the audit log's expandable rows).
 * Server-safe: no hooks.
 */
import type { ReactNode } from "react";

/** A column of a DataTable. */
export type Column<Row> = {
  /** The header's text. */
  header: ReactNode;
  /** The header is read by screen readers only (a column of buttons, "Actions"). */
  srOnly?: boolean;
  /** What the column shows for a row. */
  cell: (row: Row) => ReactNode;
  /** Below this screen width the column (header and cells) is hidden. */
  hideBelow?: "md" | "lg" | "xl" | "2xl";
  /** The cells' text alignment (default: left). */
  align?: "right";
  /** More classes for the column's cells: a width ("min-w-[10rem]"), tabular figures, no wrapping. */
  className?: string;
};

/** A column of buttons at the end of the rows ("Revoke"), its header for screen readers only. */
export const actionsColumn = <Row,>(cell: (row: Row) => ReactNode): Column<Row> => ({
  header: "Actions",
  srOnly: true,
  align: "right",
  cell,
});

/** The header of a column, when a table's body is written by hand (see ColumnHeaders). */
export type ColumnHeader = Pick<Column<never>, "header" | "srOnly" | "hideBelow">;

export const th = "px-4 py-2.5 whitespace-nowrap first:pl-4 sm:first:pl-0";
export const td = "px-4 py-3 align-top first:pl-4 sm:first:pl-0";
/** A cell of a stacked table's row (Table's `stacked`): td from the sm breakpoint up, no padding of its own in the card below it. */
export const stackedTd = "align-top sm:px-4 sm:py-3 sm:first:pl-0";

// Whole class names, for Tailwind to find.
const hidden = {
  md: "hidden md:table-cell",
  lg: "hidden lg:table-cell",
  xl: "hidden xl:table-cell",
  "2xl": "hidden 2xl:table-cell",
} as const;
const classes = (...names: (string | false | undefined)[]) => names.filter(Boolean).join(" ");

/**
 * A table that scrolls sideways on narrow screens rather than squeezing its cells: the scroll box
 * holds the whole table, header included, and is a focusable region named by the caption so keyboard
 * users can scroll it. With `stacked`, below the sm breakpoint it is a list of cards instead: the
 * header is left to screen readers and the body's rows lay out their own cells (see AuditRows).
 */
export function Table({
  caption,
  head,
  children,
  stacked = false,
}: {
  caption: string;
  head: ReactNode;
  children: ReactNode;
  stacked?: boolean;
}) {
  return (
    // biome-ignore lint/a11y/useSemanticElements: a scroll box with an explicit region role, which the tests find it by
    <div
      className="relative -mx-4 max-w-[calc(100%+2rem)] overflow-x-auto overscroll-x-contain sm:mx-0 sm:max-w-full"
      role="region"
      aria-label={caption}
      // biome-ignore lint/a11y/noNoninteractiveTabindex: a scroll box takes focus so that it scrolls by keyboard
      tabIndex={0}
    >
      <table className={classes("min-w-full divide-y divide-slate-200 text-left text-sm", stacked && "max-sm:block")}>
        <caption className="sr-only">{caption}</caption>
        <thead className={classes("text-xs font-semibold tracking-wide text-slate-500 uppercase", stacked && "max-sm:sr-only")}>
          {head}
        </thead>
        <tbody className={classes("divide-y divide-slate-100", stacked && "max-sm:block")}>{children}</tbody>
      </table>
    </div>
  );
}

/** The header row of a table's columns. */
export function ColumnHeaders({ columns }: { columns: readonly ColumnHeader[] }) {
  return (
    <tr>
      {columns.map((column, i) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: a table's columns are a fixed list: their place is their identity
        <th key={i} scope="col" className={classes(th, column.hideBelow && hidden[column.hideBelow])}>
          {column.srOnly ? <span className="sr-only">{column.header}</span> : column.header}
        </th>
      ))}
    </tr>
  );
}

/** A row's cell in a column: td's padding, hidden where the column is, the column's own classes. */
export const cellClass = (column: Pick<Column<never>, "hideBelow" | "align" | "className">) =>
  classes(td, column.hideBelow && hidden[column.hideBelow], column.align === "right" && "text-right", column.className);

/**
 * A table of rows, one per item, or `empty` when there are none (nothing at all without it: a list
 * that shows its own empty state, like SearchableList).
 */
export function DataTable<Row>({
  caption,
  columns,
  rows,
  rowKey,
  rowClassName,
  empty,
}: {
  /** Names the table and its scroll region (read by screen readers; not shown). */
  caption: string;
  columns: readonly Column<Row>[];
  rows: readonly Row[];
  rowKey: (row: Row) => string;
  /** Classes of every row ("hover:bg-slate-50" for rows that link somewhere). */
  rowClassName?: string;
  /** Shown instead of the table when there are no rows. */
  empty?: ReactNode;
}) {
  if (rows.length === 0 && empty !== undefined) return <>{empty}</>;
  return (
    <Table caption={caption} head={<ColumnHeaders columns={columns} />}>
      {rows.map((row) => (
        <tr key={rowKey(row)} className={rowClassName}>
          {columns.map((column, i) => (
            // biome-ignore lint/suspicious/noArrayIndexKey: a table's columns are a fixed list: their place is their identity
            <td key={i} className={cellClass(column)}>
              {column.cell(row)}
            </td>
          ))}
        </tr>
      ))}
    </Table>
  );
}
