/**
 * GET /admin/try/start?client=<id>: starts the dashboard's test sign-in for a client (see
 * lib/admin/try-sign-in.ts): for a signed-in admin only, the state and PKCE verifier go into a
 * short-lived cookie scoped to /admin/try, and the browser goes to the hosted login as that client.
 */
import { NextResponse } from "next/server";
import { beginTrySignIn, TRY_COOKIE } from "@/lib/admin/try-sign-in";
import { RegistryError } from "@/lib/clients/registry";
import { endpoint, otherMethods } from "@/lib/http/endpoint";
import { adminOrElsewhere, seeOther } from "../../_lib/guard";
import { browserNavigationOnly, signInLimitPage } from "../../_lib/sign-in-limit";

export const dynamic = "force-dynamic";

export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods("GET");

export const GET = endpoint("admin_try_start", {
  early: browserNavigationOnly, // the cookie must reach the browser
  async answer(k, request) {
    const admin = await adminOrElsewhere(k);
    if (admin instanceof Response) return { response: admin, refused: "access_denied" };
    const clientId = new URL(request.url).searchParams.get("client") ?? "";
    try {
      const { location, cookie } = await beginTrySignIn(k, clientId);
      const response = new NextResponse(null, { status: 303, headers: { Location: location, "Cache-Control": "no-store" } });
      const secure = k.config.issuerUrl.startsWith("https:");
      response.cookies.set(TRY_COOKIE, cookie, { httpOnly: true, sameSite: "lax", secure, path: "/admin/try", maxAge: 600 });
      return response;
    } catch (error) {
      if (!(error instanceof RegistryError)) throw error;
      const page = `/admin/clients/${encodeURIComponent(clientId)}/try`;
      return { response: seeOther(`${page}?${new URLSearchParams({ problem: error.message })}`), refused: "invalid_client" };
    }
  },
  refuse: signInLimitPage, // 503: the sign-in could not start
});
