/**
 * GET /admin/try/callback: the end of the dashboard's test sign-in (lib/admin/try-sign-in.ts). For
 * the signed-in admin whose browser started it (state and verifier in its cookie): the code is
 * redeemed, the tokens decoded (the access token then revoked), and the browser goes back to the
 * client's try page, which shows the claims (a signed, short-lived cookie carries them there).
 */
import { cookies } from "next/headers";
import { NextResponse } from "next/server";
import { type Admin, AdminAccessError, requireAdmin } from "@/lib/admin/access";
import { finishTrySignIn, sealTryResult, TRY_COOKIE, TRY_RESULT_COOKIE, tryCookieClient } from "@/lib/admin/try-sign-in";
import { keyfob } from "@/lib/runtime";
import { FORBIDDEN_PATH, LOGIN_PATH, sessionToken } from "../../_lib/guard";
import { fullPageLoadRequired, isRscRequest } from "../../_lib/rsc";

export const dynamic = "force-dynamic";

export async function GET(request: Request): Promise<Response> {
  if (isRscRequest(request)) return fullPageLoadRequired(); // never redeem the code outside the browser
  const k = keyfob();
  const jar = await cookies();
  let admin: Admin;
  try {
    admin = await requireAdmin(k, await sessionToken());
  } catch (error) {
    if (error instanceof AdminAccessError)
      return new NextResponse(null, { status: 303, headers: { Location: error.reason === "signed-out" ? LOGIN_PATH : FORBIDDEN_PATH } });
    throw error;
  }
  const attempt = jar.get(TRY_COOKIE)?.value;
  const clientId = tryCookieClient(attempt);
  const result = await finishTrySignIn(k, admin, attempt, new URL(request.url).searchParams);
  const page = clientId ? `/admin/clients/${encodeURIComponent(clientId)}/try` : "/admin/clients";
  const response = new NextResponse(null, {
    status: 303,
    headers: {
      Location: result
        ? `${page}#result`
        : `${page}?${new URLSearchParams({ problem: "This sign-in was not started in this browser, or it was already finished. Start a new one." })}`,
      "Cache-Control": "no-store",
    },
  });
  const secure = k.config.issuerUrl.startsWith("https:");
  response.cookies.set(TRY_COOKIE, "", { httpOnly: true, sameSite: "lax", secure, path: "/admin/try", maxAge: 0 }); // single use
  if (result)
    response.cookies.set(TRY_RESULT_COOKIE, await sealTryResult(k, result), {
      httpOnly: true,
      sameSite: "lax",
      secure,
      path: "/admin",
      maxAge: 600,
    });
  return response;
}
