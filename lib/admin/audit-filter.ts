/** The audit log's filter, from a query string: shared by the dashboard page, its CSV export and the management API. */
import { getAddress } from "viem";
import { normalizeClientId } from "../clients/registry";
import type { AuditFilter } from "./operations";

/** Action filters: an exact action, or a prefix ending in a dot (every action of that kind). */
export const ACTION_CHOICES = [
  { value: "", label: "Any action" },
  { value: "token.issued", label: "Token issued" },
  { value: "token.failed", label: "Token request failed" },
  { value: "token.revoked", label: "Token revoked" },
  { value: "refresh_token.", label: "Refresh grants" },
  { value: "login.", label: "Hosted-login sign-ins" },
  { value: "login.failed", label: "Sign-in failed" },
  { value: "session.", label: "Login sessions" },
  { value: "client.", label: "Clients (any change)" },
  { value: "redirect_uri.", label: "Redirect URIs" },
  { value: "post_logout_redirect_uri.", label: "Post-logout redirect URIs" },
  { value: "allowed_origin.", label: "Allowed origins" },
  { value: "signer.", label: "Signers" },
  { value: "key.", label: "Signing keys" },
  { value: "account.", label: "Accounts (block, unblock, delete)" },
  { value: "admin.", label: "Admin roles" },
  { value: "admin_api.", label: "Management API refusals" },
];

/**
 * Every outcome Keyfob records: `success`; admin refusals (`rejected`: invalid input or a refused
 * change, `forbidden`: not an admin, `error`: the change failed); and the OAuth error codes of
 * token and sign-in failures and management API refusals.
 */
export const OUTCOME_CHOICES = [
  { value: "success", label: "success" },
  { value: "rejected", label: "rejected (admin input refused)" },
  { value: "forbidden", label: "forbidden (not an admin)" },
  { value: "error", label: "error (admin change failed)" },
  { value: "invalid_request", label: "invalid_request" },
  { value: "invalid_client", label: "invalid_client" },
  { value: "invalid_grant", label: "invalid_grant" },
  { value: "invalid_scope", label: "invalid_scope" },
  { value: "unauthorized_client", label: "unauthorized_client" },
  { value: "unsupported_grant_type", label: "unsupported_grant_type" },
  { value: "access_denied", label: "access_denied" },
  { value: "invalid_token", label: "invalid_token" },
  { value: "insufficient_scope", label: "insufficient_scope" },
  { value: "temporarily_unavailable", label: "temporarily_unavailable" },
  { value: "server_error", label: "server_error" },
];

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
    // Address-shaped ids are stored EIP-55 checksummed: any case finds them.
    clientId: values.client ? normalizeClientId(values.client) : undefined,
    accountId: values.account && !errors.account ? getAddress(values.account) : undefined,
    outcome: values.outcome || undefined,
    from,
    // The end date is inclusive: up to the start of the next day.
    to: to ? new Date(to.getTime() + 86400_000) : undefined,
  };
  return { values, filter, errors };
}
