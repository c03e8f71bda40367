/**
 * /admin/audit: the audit log, newest first, filtered by action, client, account, outcome and
 * dates (at phone width behind a Filters button); one line per event, each row opening to show
 * every field (the reason of a failure in full). Times in the viewer's time zone (relative when
 * recent), UTC on hover and in the CSV export.
 */
import type { Metadata } from "next";
import Link from "next/link";
import { AuditRows } from "@/components/admin/audit-rows";
import { FilterDisclosure } from "@/components/admin/filter-disclosure";
import { FilterField, filterControl } from "@/components/admin/filter-field";
import { type ColumnHeader, ColumnHeaders, Table } from "@/components/admin/data-table";
import { button, Card, EmptyState, PageHeader, Pagination } from "@/components/admin/ui";
import { auditEvents } from "@/lib/admin/operations";
import { ACTION_CHOICES, OUTCOME_CHOICES, parseAuditQuery, type AuditQuery } from "../../_lib/audit-filter";
import { adminPage, pageNumber, param, type SearchParams } from "../../_lib/guard";

export const metadata: Metadata = { title: "Audit log" };

/** The columns of AuditRows, which writes the body: a row per event and one below it that opens. */
const columns: ColumnHeader[] = [
  { header: "Time" },
  { header: "Action" },
  { header: "Outcome" },
  { header: "Actor, client, account" },
  { header: "Detail", hideBelow: "lg" },
  // In the row's details below 1536 px: an IPv6 address would push the row past one line.
  { header: "IP", hideBelow: "2xl" },
  { header: "Details", srOnly: true },
];

export default async function AuditPage({ searchParams }: { searchParams: SearchParams }) {
  const { k, admin } = await adminPage();
  const query = await searchParams;
  const { values, filter, errors } = parseAuditQuery((name) => param(query[name]));
  const invalid = Object.keys(errors).length > 0;
  const result = invalid
    ? { items: [], total: 0, page: 1, pageSize: 20 }
    : await auditEvents(k, admin, { ...filter, page: pageNumber(query.page) });
  const active = Object.fromEntries(Object.entries(values).filter(([, value]) => value !== ""));
  const href = (page: number) => `/admin/audit?${new URLSearchParams({ ...active, page: String(page) })}`;
  const exportHref = `/admin/audit/export?${new URLSearchParams(active)}`;
  const field = (name: keyof AuditQuery) => filterControl(`audit-${name}`, name, values[name], errors[name]);

  return (
    <>
      <PageHeader
        title="Audit log"
        description="Admin changes (refused ones too, with why), sign-ins, and token issuances and failures, newest first. Times are in your time zone; hover for UTC. The CSV export is in UTC."
        actions={
          invalid ? undefined : (
            <a href={exportHref} className={button.secondary} download>
              Export CSV
            </a>
          )
        }
      />
      <Card>
        <FilterDisclosure active={Object.keys(active).length} invalid={invalid}>
          <form action="/admin/audit" aria-label="Filter the audit log" className="grid gap-3 sm:grid-cols-2 lg:grid-cols-3">
            <FilterField id="audit-action" title="Action" error={errors.action}>
              <select {...field("action")}>
                {ACTION_CHOICES.map((choice) => (
                  <option key={choice.value} value={choice.value}>
                    {choice.label}
                  </option>
                ))}
                {values.action && !ACTION_CHOICES.some((c) => c.value === values.action) && (
                  <option value={values.action}>{values.action}</option>
                )}
              </select>
            </FilterField>
            <FilterField id="audit-outcome" title="Outcome" error={errors.outcome}>
              <select {...field("outcome")}>
                <option value="">Any outcome</option>
                {OUTCOME_CHOICES.map((choice) => (
                  <option key={choice.value} value={choice.value}>
                    {choice.label}
                  </option>
                ))}
                {values.outcome && !OUTCOME_CHOICES.some((c) => c.value === values.outcome) && (
                  <option value={values.outcome}>{values.outcome}</option>
                )}
              </select>
            </FilterField>
            <FilterField id="audit-client" title="Client ID" error={errors.client}>
              <input {...field("client")} placeholder="Any client" autoComplete="off" spellCheck={false} />
            </FilterField>
            <FilterField id="audit-account" title="Account address" error={errors.account}>
              <input {...field("account")} placeholder="Any account (0x…)" autoComplete="off" spellCheck={false} />
            </FilterField>
            <FilterField id="audit-from" title="From (UTC day)" error={errors.from}>
              <input {...field("from")} type="date" />
            </FilterField>
            <FilterField id="audit-to" title="To (UTC day, inclusive)" error={errors.to}>
              <input {...field("to")} type="date" />
            </FilterField>
            <div className="flex gap-2 sm:col-span-2 lg:col-span-3">
              <button type="submit" className={button.primary}>
                Apply filter
              </button>
              {Object.keys(active).length > 0 && (
                <Link href="/admin/audit" className={button.secondary}>
                  Clear
                </Link>
              )}
            </div>
          </form>
        </FilterDisclosure>

        {invalid ? (
          <p role="alert" className="rounded-lg border border-red-200 bg-red-50 px-3 py-2 text-sm text-red-800">
            Please correct the highlighted fields.
          </p>
        ) : result.items.length === 0 ? (
          <EmptyState title={Object.keys(active).length > 0 ? "No events match this filter" : "No events yet"}>
            {Object.keys(active).length > 0
              ? "Widen the date range or clear a field."
              : "Admin changes and token requests are recorded here."}
          </EmptyState>
        ) : (
          <Table caption="Audit events" head={<ColumnHeaders columns={columns} />} stacked>
            <AuditRows events={result.items.map((event) => ({ ...event, at: event.at.toISOString() }))} />
          </Table>
        )}
        <Pagination page={result.page} pageSize={result.pageSize} total={result.total} href={href} />
      </Card>
    </>
  );
}
