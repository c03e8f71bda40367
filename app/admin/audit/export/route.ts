/**
 * GET /admin/audit/export?…: the filtered audit log as CSV (same filter as /admin/audit). Checks
 * the admin session like every page: 401 signed out, 403 not an admin, 400 for a bad filter.
 */
import { type Admin, AdminAccessError, requireAdmin } from "@/lib/admin/access";
import { auditCsv } from "@/lib/admin/operations";
import { keyfob } from "@/lib/runtime";
import { parseAuditQuery } from "../../_lib/audit-filter";
import { sessionToken } from "../../_lib/guard";

export const dynamic = "force-dynamic";

const text = (body: string, status: number) =>
  new Response(body, { status, headers: { "Content-Type": "text/plain; charset=utf-8", "Cache-Control": "no-store" } });

export async function GET(request: Request): Promise<Response> {
  const k = keyfob();
  let admin: Admin;
  try {
    admin = await requireAdmin(k, await sessionToken());
  } catch (error) {
    if (error instanceof AdminAccessError) return text(error.message, error.reason === "signed-out" ? 401 : 403);
    throw error;
  }
  const query = new URL(request.url).searchParams;
  const { filter, errors } = parseAuditQuery((name) => query.get(name)?.trim() ?? "");
  const problems = Object.entries(errors);
  if (problems.length > 0) return text(problems.map(([field, message]) => `${field}: ${message}`).join("\n"), 400);

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
