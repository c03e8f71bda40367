/**
 * GET /admin/callback: the end of an admin sign-in. The state must match the login cookie this
 * browser got at /admin/login, and the code is redeemed with its PKCE verifier; a dashboard session
 * starts (lib/admin/session.ts), its cookie is set and the browser goes to /admin (which checks
 * that the account is an admin), or back to /admin/setup when it came from a set-up link.
 * Anything else ends at /admin/signin-failed with the reason, and no session. The endpoint wrapper
 * applies RATE_LIMIT_ADMIN_SIGNIN (a 429 page), counts and logs it.
 */
import { cookies } from "next/headers";
import { NextResponse } from "next/server";
import { ADMIN_LOGIN_COOKIE, finishAdminLogin } from "@/lib/admin/session";
import { clientIp } from "@/lib/http/client-ip";
import { endpoint, otherMethods, type Page } from "@/lib/http/endpoint";
import type { Keyfob } from "@/lib/keyfob";
import type { OAuthError } from "@/lib/oauth/errors";
import { loginCookie, SETUP_COOKIE, sessionCookie } from "../_lib/cookies";
import { browserNavigationOnly, signInLimitPage } from "../_lib/sign-in-limit";

export const dynamic = "force-dynamic";

export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods("GET");

/** Back to the sign-in's end with the login cookie cleared: single use, whatever the outcome. */
function redirectTo(k: Keyfob, location: string) {
  const response = new NextResponse(null, { status: 303, headers: { Location: location, "Cache-Control": "no-store" } });
  const [name, options] = loginCookie(k, 0);
  response.cookies.set(name, "", options);
  return response;
}

const failed = (k: Keyfob, reason: string) => redirectTo(k, `/admin/signin-failed?reason=${reason}`);

export const GET = endpoint("admin_callback", {
  early: browserNavigationOnly, // never redeem the code outside the browser
  async answer(k, request, query) {
    const login = (await cookies()).get(ADMIN_LOGIN_COOKIE)?.value;
    const error = query.get("error");
    if (error)
      return {
        response: failed(k, error === "access_denied" ? "cancelled" : "refused"),
        refused: error === "access_denied" ? "access_denied" : "upstream_error",
      };
    if (!login) return { response: failed(k, "browser"), refused: "browser" };
    const session = await finishAdminLogin(k, login, query, {
      ip: clientIp(request),
      userAgent: request.headers.get("user-agent") ?? undefined,
    });
    if (!session) return { response: failed(k, "browser"), refused: "browser" };
    // A first admin's sign-in from the set-up link goes back there to confirm (app/admin/setup).
    const setup = (await cookies()).get(SETUP_COOKIE)?.value;
    const response = redirectTo(k, setup ? "/admin/setup" : "/admin");
    const [name, options] = sessionCookie(k);
    response.cookies.set(name, session, options);
    return response;
  },
  refuse(error: OAuthError, { keyfob: k, limited }) {
    if (limited) return signInLimitPage(error);
    return failed(k, error.status >= 500 ? "unavailable" : error.why?.code === "admin_contract_signature" ? "contract" : "expired");
  },
} satisfies Page<URLSearchParams>);
