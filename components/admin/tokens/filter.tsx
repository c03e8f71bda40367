/** The Tokens page's filter: a client and/or an account, and every token or vehicle tokens only, each with its error from the query. */
import Link from "next/link";
import { FilterField, filterControl } from "@/components/admin/filter-field";
import { button } from "@/components/admin/ui";
import type { FilterErrors, TokenQuery } from "@/lib/admin/filters";

export function TokensFilter({ values, errors }: { values: TokenQuery; errors: FilterErrors<keyof TokenQuery> }) {
  return (
    <form action="/admin/tokens" className="mb-5 grid gap-3 sm:grid-cols-[1fr_1fr_auto_auto] sm:items-end" aria-label="Filter tokens">
      <FilterField id="tokens-client" title="Client ID" error={errors.client}>
        <input
          {...filterControl("tokens-client", "client", values.client, errors.client)}
          autoComplete="off"
          spellCheck={false}
          placeholder="Any client"
        />
      </FilterField>
      <FilterField id="tokens-account" title="Account address" error={errors.account}>
        <input
          {...filterControl("tokens-account", "account", values.account, errors.account)}
          autoComplete="off"
          spellCheck={false}
          placeholder="Any account (0x…)"
        />
      </FilterField>
      <FilterField id="tokens-kind" title="Kind" error={errors.kind}>
        <select {...filterControl("tokens-kind", "kind", values.kind, errors.kind)}>
          <option value="">Every token</option>
          <option value="vehicle">Vehicle tokens</option>
          {values.kind && values.kind !== "vehicle" && <option value={values.kind}>{values.kind}</option>}
        </select>
      </FilterField>
      <div className="flex gap-2">
        <button type="submit" className={button.secondary}>
          Show
        </button>
        {(values.client || values.account || values.kind) && (
          <Link href="/admin/tokens" className={button.secondary}>
            Clear
          </Link>
        )}
      </div>
    </form>
  );
}
