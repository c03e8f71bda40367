/**
 * GET /admin/login: starts an admin sign-in through Keyfob's own hosted login (the dashboard is
 * the client `keyfob-admin`): the state and PKCE verifier go into a short-lived cookie scoped to
 * /admin, and the browser goes to /auth.
 */
import { NextResponse } from "next/server";
import { beginAdminLogin } from "@/lib/admin/session";
import { keyfob } from "@/lib/runtime";
import { loginCookie } from "../_lib/cookies";
import { fullPageLoadRequired, isRscRequest } from "../_lib/rsc";
import { adminSignInRefusal } from "../_lib/sign-in-limit";

export const dynamic = "force-dynamic";

export async function GET(request: Request): Promise<Response> {
  if (isRscRequest(request)) return fullPageLoadRequired(); // the login cookie must reach the browser
  const k = keyfob();
  const refused = await adminSignInRefusal(k, request);
  if (refused) return refused;
  const { location, cookie } = await beginAdminLogin(k);
  const response = new NextResponse(null, { status: 303, headers: { Location: location, "Cache-Control": "no-store" } });
  response.cookies.set(loginCookie(k)[0], cookie, loginCookie(k)[1]);
  return response;
}
