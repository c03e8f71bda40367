/**
 * GET /admin/try/callback: the end of the dashboard's test sign-in (lib/admin/try-sign-in.ts). For
 * the signed-in admin whose browser started it (state and verifier in its cookie): the code is
 * redeemed, the tokens decoded (the access token then revoked), and the browser goes back to the
 * client's try page, which shows the claims (a signed, short-lived cookie carries them there).
 */
import { cookies } from "next/headers";
import { NextResponse } from "next/server";
import { finishTrySignIn, sealTryResult, TRY_COOKIE, TRY_RESULT_COOKIE, tryCookieClient } from "@/lib/admin/try-sign-in";
import { endpoint, otherMethods } from "@/lib/http/endpoint";
import { adminOrElsewhere } from "../../_lib/guard";
import { browserNavigationOnly, signInLimitPage } from "../../_lib/sign-in-limit";

export const dynamic = "force-dynamic";

export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods("GET");

const NOT_STARTED = "This sign-in was not started in this browser, or it was already finished. Start a new one.";

export const GET = endpoint("admin_try_callback", {
  early: browserNavigationOnly, // never redeem the code outside the browser
  async answer(k, request) {
    const admin = await adminOrElsewhere(k);
    if (admin instanceof Response) return { response: admin, refused: "access_denied" };
    const attempt = (await cookies()).get(TRY_COOKIE)?.value;
    const clientId = tryCookieClient(attempt);
    const result = await finishTrySignIn(k, admin, attempt, new URL(request.url).searchParams);
    const page = clientId ? `/admin/clients/${encodeURIComponent(clientId)}/try` : "/admin/clients";
    const location = result ? `${page}#result` : `${page}?${new URLSearchParams({ problem: NOT_STARTED })}`;
    const response = new NextResponse(null, { status: 303, headers: { Location: location, "Cache-Control": "no-store" } });
    const secure = k.config.issuerUrl.startsWith("https:");
    response.cookies.set(TRY_COOKIE, "", { httpOnly: true, sameSite: "lax", secure, path: "/admin/try", maxAge: 0 }); // single use
    if (result) {
      const sealed = await sealTryResult(k, result);
      response.cookies.set(TRY_RESULT_COOKIE, sealed, { httpOnly: true, sameSite: "lax", secure, path: "/admin", maxAge: 600 });
    }
    return result ? response : { response, refused: "invalid_request" };
  },
  refuse: signInLimitPage, // 503: the sign-in could not finish
});
