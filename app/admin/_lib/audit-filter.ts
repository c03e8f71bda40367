/** The audit log's filter, from a query string: shared by the page and the CSV export. */
import type { AuditFilter } from "@/lib/admin/operations";

export const ACTION_CHOICES = [
  { value: "", label: "Any action" },
  { value: "token.issued", label: "Token issued" },
  { value: "token.failed", label: "Token request failed" },
  { value: "token.revoked", label: "Token revoked" },
  { value: "client.", label: "Clients (any change)" },
  { value: "redirect_uri.", label: "Redirect URIs" },
  { value: "signer.", label: "Signers" },
  { value: "key.", label: "Signing keys" },
  { value: "admin.", label: "Admin roles" },
];

export const OUTCOME_CHOICES = ["success", "rejected", "error", "invalid_client", "invalid_grant", "invalid_request", "invalid_scope", "temporarily_unavailable"];

export type AuditQuery = { action: string; client: string; account: string; outcome: string; from: string; to: string };

const DAY = /^\d{4}-\d{2}-\d{2}$/;

function day(value: string): Date | undefined {
  if (!DAY.test(value)) return undefined;
  const date = new Date(`${value}T00:00:00Z`);
  return Number.isNaN(date.getTime()) || date.toISOString().slice(0, 10) !== value ? undefined : date;
}

/** Reads the filter; `errors` names the fields that could not be used (the filter is then not applied). */
export function parseAuditQuery(get: (name: string) => string): { values: AuditQuery; filter: AuditFilter; errors: Partial<Record<keyof AuditQuery, string>> } {
  const values: AuditQuery = {
    action: get("action").slice(0, 64),
    client: get("client").slice(0, 128),
    account: get("account").slice(0, 42),
    outcome: get("outcome").slice(0, 64),
    from: get("from"),
    to: get("to"),
  };
  const errors: Partial<Record<keyof AuditQuery, string>> = {};
  const from = values.from ? day(values.from) : undefined;
  const to = values.to ? day(values.to) : undefined;
  if (values.from && !from) errors.from = "Must be a date (YYYY-MM-DD).";
  if (values.to && !to) errors.to = "Must be a date (YYYY-MM-DD).";
  if (from && to && from > to) errors.to = "Must be on or after the start date.";
  if (values.account && !/^0x[0-9a-fA-F]{40}$/.test(values.account)) errors.account = "Must be a 0x-prefixed 20-byte hex address.";
  const filter: AuditFilter = {
    action: values.action || undefined,
    clientId: values.client || undefined,
    accountId: values.account && !errors.account ? values.account : undefined,
    outcome: values.outcome || undefined,
    from,
    // The end date is inclusive: up to the start of the next day.
    to: to ? new Date(to.getTime() + 86400_000) : undefined,
  };
  return { values, filter, errors };
}
