/** The audit log's filter lives in lib/admin (the management API reads it too). */
export { ACTION_CHOICES, OUTCOME_CHOICES, parseAuditQuery, type AuditQuery } from "@/lib/admin/audit-filter";
