/**
 * POST /admin/logout: ends the admin session (clears its cookie) and shows the signed-out page.
 * Only from Keyfob's own pages: a request whose Origin is another site is refused.
 */
import { NextResponse } from "next/server";
import { keyfob } from "@/lib/runtime";
import { sessionCookie } from "../_lib/cookies";

export const dynamic = "force-dynamic";

export async function POST(request: Request): Promise<Response> {
  const k = keyfob();
  const origin = request.headers.get("origin");
  if (origin && origin !== new URL(k.config.issuerUrl).origin) {
    return new Response("Cross-site sign-out refused", { status: 403, headers: { "Content-Type": "text/plain; charset=utf-8" } });
  }
  const response = new NextResponse(null, { status: 303, headers: { Location: "/admin/signed-out", "Cache-Control": "no-store" } });
  const [name, options] = sessionCookie(k, 0);
  response.cookies.set(name, "", options);
  return response;
}
