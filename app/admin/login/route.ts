/**
 * GET /admin/login: starts an admin sign-in through Keyfob's own hosted login (the dashboard is
 * the client `keyfob-admin`): the state and PKCE verifier go into a short-lived cookie scoped to
 * /admin, and the browser goes to /auth. The endpoint wrapper applies RATE_LIMIT_ADMIN_SIGNIN.
 */
import { NextResponse } from "next/server";
import { beginAdminLogin } from "@/lib/admin/session";
import { endpoint, otherMethods } from "@/lib/http/endpoint";
import { loginCookie } from "../_lib/cookies";
import { browserNavigationOnly, signInLimitPage } from "../_lib/sign-in-limit";

export const dynamic = "force-dynamic";

export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods("GET");

export const GET = endpoint("admin_login", {
  early: browserNavigationOnly, // the login cookie must reach the browser
  async answer(k) {
    const { location, cookie } = await beginAdminLogin(k);
    const response = new NextResponse(null, { status: 303, headers: { Location: location, "Cache-Control": "no-store" } });
    response.cookies.set(loginCookie(k)[0], cookie, loginCookie(k)[1]);
    return response;
  },
  refuse: signInLimitPage,
});
