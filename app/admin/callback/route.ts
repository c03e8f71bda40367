/**
 * GET /admin/callback: the end of an admin sign-in. The state must match the login cookie this
 * browser got at /admin/login, and the code is redeemed with its PKCE verifier; a dashboard session
 * starts (lib/admin/session.ts), its cookie is set and the browser goes to /admin (which checks
 * that the account is an admin).
 * Anything else ends at /admin/signin-failed with the reason, and no session.
 */
import { cookies } from "next/headers";
import { NextResponse } from "next/server";
import { ADMIN_LOGIN_COOKIE, finishAdminLogin } from "@/lib/admin/session";
import { clientIp } from "@/lib/http/client-ip";
import { toOAuthError } from "@/lib/http/respond";
import { log } from "@/lib/log";
import { keyfob } from "@/lib/runtime";
import { loginCookie, sessionCookie } from "../_lib/cookies";
import { fullPageLoadRequired, isRscRequest } from "../_lib/rsc";
import { adminSignInRefusal } from "../_lib/sign-in-limit";

export const dynamic = "force-dynamic";

export async function GET(request: Request): Promise<Response> {
  if (isRscRequest(request)) return fullPageLoadRequired(); // never redeem the code outside the browser
  const k = keyfob();
  const refused = await adminSignInRefusal(k, request);
  if (refused) return refused;
  const query = new URL(request.url).searchParams;
  const login = (await cookies()).get(ADMIN_LOGIN_COOKIE)?.value;

  const redirectTo = (location: string) => {
    const response = new NextResponse(null, { status: 303, headers: { Location: location, "Cache-Control": "no-store" } });
    const [name, options] = loginCookie(k, 0);
    response.cookies.set(name, "", options); // single use, whatever the outcome
    return response;
  };
  const failed = (reason: string) => redirectTo(`/admin/signin-failed?reason=${reason}`);

  const error = query.get("error");
  if (error) return failed(error === "access_denied" ? "cancelled" : "refused");
  if (!login) return failed("browser");

  let session: string | undefined;
  try {
    session = await finishAdminLogin(k, login, query, { ip: clientIp(request), userAgent: request.headers.get("user-agent") ?? undefined });
  } catch (caught) {
    const error = toOAuthError(caught);
    log.info("admin sign-in refused", { endpoint: "admin_callback", error: error.code });
    return failed(error.status >= 500 ? "unavailable" : error.why?.code === "admin_contract_signature" ? "contract" : "expired");
  }
  if (!session) return failed("browser");

  const response = redirectTo("/admin");
  const [name, options] = sessionCookie(k);
  response.cookies.set(name, session, options);
  return response;
}
