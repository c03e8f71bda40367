/**
 * GET /admin/audit/export?…: the filtered audit log as CSV (same filter as /admin/audit). Checks
 * the admin session like every page: 401 signed out, 403 not an admin, 400 for a bad filter.
 */
import { type Admin, AdminAccessError, requireAdmin } from "@/lib/admin/access";
import { auditCsv } from "@/lib/admin/operations";
import { endpoint, otherMethods } from "@/lib/http/endpoint";
import type { Keyfob } from "@/lib/keyfob";
import { parseAuditQuery } from "../../_lib/audit-filter";
import { sessionToken } from "../../_lib/guard";

export const dynamic = "force-dynamic";

export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods("GET");

const refusal = (body: string, status: number, refused: string) => ({
  response: new Response(body, { status, headers: { "Content-Type": "text/plain; charset=utf-8", "Cache-Control": "no-store" } }),
  refused,
});

export const GET = endpoint("admin_audit_export", { answer: exportAuditLog });

async function exportAuditLog(k: Keyfob, request: Request) {
  let admin: Admin;
  try {
    admin = await requireAdmin(k, await sessionToken());
  } catch (error) {
    if (error instanceof AdminAccessError)
      return error.reason === "signed-out" ? refusal(error.message, 401, "invalid_token") : refusal(error.message, 403, "access_denied");
    throw error;
  }
  const query = new URL(request.url).searchParams;
  const { filter, errors } = parseAuditQuery((name) => query.get(name)?.trim() ?? "");
  const problems = Object.entries(errors);
  if (problems.length > 0) return refusal(problems.map(([field, message]) => `${field}: ${message}`).join("\n"), 400, "invalid_request");

  const csv = await auditCsv(k, admin, filter);
  const stamp = new Date().toISOString().slice(0, 19).replace(/[-:]/g, "").replace("T", "-");
  return new Response(csv, {
    headers: {
      "Content-Type": "text/csv; charset=utf-8",
      "Content-Disposition": `attachment; filename="keyfob-audit-${stamp}.csv"`,
      "Cache-Control": "no-store",
      "X-Content-Type-Options": "nosniff",
    },
  });
}
