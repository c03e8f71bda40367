/** The audit log's filter, from a query string: shared by the dashboard page, its CSV export and the management API. */
import { normalizeClientId } from "../clients/client-id";
import { filterReader, MAX_CLIENT_ID, MAX_WORD, MESSAGES, nextDay, type FilterErrors, type Get } from "./filters";
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

/**
 * Reads the filter (lib/admin/filters.ts); `errors` names the fields that could not be used (the
 * filter is then not applied).
 */
export function parseAuditQuery(get: Get): { values: AuditQuery; filter: AuditFilter; errors: FilterErrors<keyof AuditQuery> } {
  const reader = filterReader<keyof AuditQuery>(get);
  const action = reader.text("action", MAX_WORD);
  const outcome = reader.text("outcome", MAX_WORD);
  const client = reader.text("client", MAX_CLIENT_ID);
  const accountId = reader.address("account");
  const from = reader.day("from");
  const to = reader.day("to");
  const { values, errors } = reader;
  if (from && to && from > to) errors.to = MESSAGES.order;
  const filter: AuditFilter = {
    action,
    // Address-shaped ids are stored EIP-55 checksummed: any case finds them.
    clientId: client ? normalizeClientId(client) : undefined,
    accountId,
    outcome,
    from,
    // The end date is inclusive: up to the start of the next day.
    to: to && nextDay(to),
  };
  return { values, filter, errors };
}
