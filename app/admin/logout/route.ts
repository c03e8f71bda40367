/**
 * POST /admin/logout: ends the dashboard session (its row, so the cookie is worthless everywhere)
 * and clears its cookie; with `everywhere=1`, every dashboard session of the same admin. Then the
 * signed-out page. Only from Keyfob's own pages: a request whose Origin is another site is refused.
 */
import { NextResponse } from "next/server";
import type { Keyfob } from "@/lib/keyfob";
import { endAdminSessions, readAdminSession } from "@/lib/admin/session";
import { endpoint, otherMethods } from "@/lib/http/endpoint";
import { sessionCookie } from "../_lib/cookies";
import { sessionToken } from "../_lib/guard";

export const dynamic = "force-dynamic";

export const { GET, HEAD, PUT, PATCH, DELETE, OPTIONS } = otherMethods("POST");

export const POST = endpoint("admin_logout", { answer: signOut });

async function signOut(k: Keyfob, request: Request) {
  const origin = request.headers.get("origin");
  if (origin && origin !== new URL(k.config.issuerUrl).origin) {
    const response = new Response("Cross-site sign-out refused", { status: 403, headers: { "Content-Type": "text/plain; charset=utf-8" } });
    return { response, refused: "access_denied" };
  }
  const everywhere = (await request.formData().catch(() => undefined))?.get("everywhere") === "1";
  const token = await sessionToken();
  const admin = everywhere ? await readAdminSession(k, token) : undefined;
  const ended = await endAdminSessions(k, token, everywhere ? "everywhere" : "this");
  if (admin)
    await k.audit.write({
      actor: admin.accountId,
      action: "admin.signed_out_everywhere",
      outcome: "success",
      accountId: admin.accountId,
      detail: `${ended} dashboard sessions ended`,
    });
  const response = new NextResponse(null, {
    status: 303,
    headers: { Location: `/admin/signed-out${admin ? "?everywhere=1" : ""}`, "Cache-Control": "no-store" },
  });
  const [name, options] = sessionCookie(k, 0);
  response.cookies.set(name, "", options);
  return response;
}
