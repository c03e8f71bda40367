/**
 * What admins can do, for the dashboard, the command line and the management API alike (through
 * lib/admin/changes.ts). Every change takes the Admin that requireAdmin, the CLI or the API
 * vouched for, and is written to the audit log with what it changed (before -> after), in the
 * change's transaction; refused ones too, with the reason.
 *
 * Scopes (lib/admin/scopes.ts): a caller never gives a scope it lacks, so what could hand out the
 * management API needs keyfob:admin, which holds them all: allowing a client the API or a scope of
 * it (withdrawing either grants nothing), and rotating or ending the overlap of a management
 * client's secret (the new secret gets that client's scopes). Acting on an account that is an admin (granted the role,
 * configured, or by email) needs keyfob:admin too, so that keyfob:accounts cannot lock admins out.
 */
export * from "./accounts";
export { differences, failureReason } from "./audited";
export * from "./clients";
export * from "./keys";
export * from "./reads";
export * from "./tokens";
