/**
 * GET /admin/try/start?client=<id>: starts the dashboard's test sign-in for a client (see
 * lib/admin/try-sign-in.ts): for a signed-in admin only, the state and PKCE verifier go into a
 * short-lived cookie scoped to /admin/try, and the browser goes to the hosted login as that client.
 */
import { NextResponse } from "next/server";
import { AdminAccessError, requireAdmin } from "@/lib/admin/access";
import { beginTrySignIn, TRY_COOKIE } from "@/lib/admin/try-sign-in";
import { RegistryError } from "@/lib/clients/registry";
import { keyfob } from "@/lib/runtime";
import { FORBIDDEN_PATH, LOGIN_PATH, sessionToken } from "../../_lib/guard";
import { fullPageLoadRequired, isRscRequest } from "../../_lib/rsc";

export const dynamic = "force-dynamic";

const see = (location: string) => new NextResponse(null, { status: 303, headers: { Location: location, "Cache-Control": "no-store" } });

export async function GET(request: Request): Promise<Response> {
  if (isRscRequest(request)) return fullPageLoadRequired(); // the cookie must reach the browser
  const k = keyfob();
  try {
    await requireAdmin(k, await sessionToken());
  } catch (error) {
    if (error instanceof AdminAccessError) return see(error.reason === "signed-out" ? LOGIN_PATH : FORBIDDEN_PATH);
    throw error;
  }
  const clientId = new URL(request.url).searchParams.get("client") ?? "";
  const page = `/admin/clients/${encodeURIComponent(clientId)}/try`;
  try {
    const { location, cookie } = await beginTrySignIn(k, clientId);
    const response = see(location);
    response.cookies.set(TRY_COOKIE, cookie, {
      httpOnly: true,
      sameSite: "lax",
      secure: k.config.issuerUrl.startsWith("https:"),
      path: "/admin/try",
      maxAge: 600,
    });
    return response;
  } catch (error) {
    if (error instanceof RegistryError) return see(`${page}?${new URLSearchParams({ problem: error.message })}`);
    throw error;
  }
}
