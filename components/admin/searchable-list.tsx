/**
 * A list page's body below its header: a search box (?q=), the rows (the page's table), the
 * empty state that fits (nothing matches, a page past the end, nothing yet) and the paging links.
 * A search that cannot be one (lib/admin/filters.ts) is shown with its error at the box.
 */
import Link from "next/link";
import type { ReactNode } from "react";
import type { Page } from "@/lib/admin/operations";
import { button, EmptyState, inputClass, Pagination } from "./ui";

export function SearchableList({
  path,
  plural,
  search,
  error,
  result,
  searchBox,
  searchHint,
  none,
  children,
}: {
  /** The list's own path, where searching, clearing and paging go. */
  path: string;
  /** What the list holds, in lower case ("accounts"), for the empty states' titles. */
  plural: string;
  search: string;
  /** Why the search cannot be used (the list is then empty). */
  error?: string;
  result: Page<unknown>;
  searchBox: { id: string; label: string; placeholder: string; autoComplete?: string; spellCheck?: boolean };
  /** How the search matches, shown when nothing does. */
  searchHint: ReactNode;
  /** The empty state of a list with no rows at all. */
  none: { hint: ReactNode; action?: ReactNode };
  /** The rows, shown when this page has any. */
  children: ReactNode;
}) {
  const href = (page: number) => `${path}?${new URLSearchParams({ ...(search && { q: search }), page: String(page) })}`;
  return (
    <>
      {/* biome-ignore lint/a11y/useSemanticElements: the form is the search landmark; a <search> around it would be one more box */}
      <form role="search" action={path} className="mb-5 flex max-w-xl gap-2">
        <label htmlFor={searchBox.id} className="sr-only">
          {searchBox.label}
        </label>
        <input
          id={searchBox.id}
          name="q"
          type="search"
          defaultValue={search}
          placeholder={searchBox.placeholder}
          className={inputClass}
          autoComplete={searchBox.autoComplete}
          spellCheck={searchBox.spellCheck}
          aria-invalid={error ? true : undefined}
          aria-describedby={error ? `${searchBox.id}-error` : undefined}
        />
        <button type="submit" className={button.secondary}>
          Search
        </button>
      </form>
      {error && (
        <p id={`${searchBox.id}-error`} role="alert" className="-mt-3 mb-5 text-sm font-medium text-red-700">
          {error}
        </p>
      )}

      {result.items.length === 0 ? (
        error ? (
          <EmptyState
            title="Correct the search"
            action={
              <Link href={path} className={button.secondary}>
                Clear the search
              </Link>
            }
          >
            {searchHint}
          </EmptyState>
        ) : search ? (
          <EmptyState
            title={`No ${plural} match “${search}”`}
            action={
              <Link href={path} className={button.secondary}>
                Clear the search
              </Link>
            }
          >
            {searchHint}
          </EmptyState>
        ) : result.total > 0 ? (
          <EmptyState
            title={`No ${plural} on this page`}
            action={
              <Link href={path} className={button.secondary}>
                Go to the first page
              </Link>
            }
          />
        ) : (
          <EmptyState title={`No ${plural} yet`} action={none.action}>
            {none.hint}
          </EmptyState>
        )
      ) : (
        <div className="rounded-xl bg-white px-4 py-2 shadow-xs ring-1 ring-slate-200 sm:px-5">{children}</div>
      )}
      <Pagination page={result.page} pageSize={result.pageSize} total={result.total} href={href} />
    </>
  );
}
