/**
 * /admin/setup: the first admin's one-time set-up link (lib/admin/first-admin.ts).
 *   GET ?code=…  keeps the code in an httpOnly cookie (scoped to /admin) and comes back without it,
 *                so the code leaves the address bar and history at once.
 *   GET          while the code is good: "sign in with your wallet" (the dashboard's sign-in, whose
 *                callback comes back here while the cookie is set), then, signed in, a button to
 *                become the first admin. A refused code (used, expired, unknown, or an admin
 *                exists already) gets a page saying so.
 *   POST         makes the signed-in account the first admin, then the dashboard.
 * The POST needs the cookies, which a cross-site form does not send (SameSite=Lax); a request whose
 * Origin is another site is refused as well.
 */
import { cookies } from "next/headers";
import { NextResponse } from "next/server";
import { checkSetupCode, claimFirstAdmin, SETUP_REFUSALS, SetupRefused, type SetupRefusal } from "@/lib/admin/first-admin";
import { readAdminSession } from "@/lib/admin/session";
import { endpoint, otherMethods, type Page } from "@/lib/http/endpoint";
import type { Keyfob } from "@/lib/keyfob";
import { escapeHtml, htmlPage } from "../../_lib/html-page";
import { SETUP_COOKIE, setupCookie } from "../_lib/cookies";
import { seeOther, sessionToken } from "../_lib/guard";
import { browserNavigationOnly, signInLimitPage } from "../_lib/sign-in-limit";

export const dynamic = "force-dynamic";

export const { PUT, PATCH, DELETE, OPTIONS } = otherMethods("GET", "POST");

const STATUS: Record<SetupRefusal, number> = { "admin-exists": 403, unknown: 404, used: 410, expired: 410 };

export const GET = endpoint("admin_setup", {
  early: browserNavigationOnly,
  async answer(k, _request, query) {
    const code = query.get("code");
    if (code !== null) {
      const response = NextResponse.redirect(new URL("/admin/setup", k.config.issuerUrl), 303);
      response.headers.set("Cache-Control", "no-store");
      response.cookies.set(SETUP_COOKIE, code.slice(0, 100), setupCookie(k)[1]);
      return response;
    }
    const state = await checkSetupCode(k, (await cookies()).get(SETUP_COOKIE)?.value);
    if (state !== "ok") return refused(k, state);
    const account = (await readAdminSession(k, await sessionToken()))?.accountId;
    return htmlPage({
      status: 200,
      eyebrow: "Set-up",
      title: "First admin",
      heading: "Become Keyfob's first admin",
      paragraphs: account
        ? [
            { before: "You are signed in as", code: account, after: "." },
            "This account becomes the admin of this Keyfob: it can manage clients, accounts and keys, and grant the role to others. The set-up link then stops working.",
          ]
        : [
            "Keyfob has no admin yet, and this one-time link lets you become the first.",
            "Sign in with the wallet whose account should be the admin; you come back here to confirm.",
          ],
      actions: account
        ? `<form action="/admin/setup" method="post"><button type="submit">Make ${escapeHtml(shortAddress(account))} the admin</button></form>
    <a class="button" href="/admin/login">Use another account</a>`
        : `<form action="/admin/login" method="get"><button type="submit">Sign in with your wallet</button></form>`,
      headers: { "Cache-Control": "no-store" },
    });
  },
  refuse: signInLimitPage,
} satisfies Page<URLSearchParams>);

export const POST = endpoint("admin_setup", {
  async answer(k, request) {
    const origin = request.headers.get("origin");
    if (origin && origin !== new URL(k.config.issuerUrl).origin) {
      const response = new Response("Cross-site set-up refused", { status: 403, headers: { "Content-Type": "text/plain; charset=utf-8" } });
      return { response, refused: "access_denied" };
    }
    const account = (await readAdminSession(k, await sessionToken()))?.accountId;
    if (!account) return seeOther("/admin/setup");
    try {
      await claimFirstAdmin(k, (await cookies()).get(SETUP_COOKIE)?.value, account);
    } catch (error) {
      if (error instanceof SetupRefused) return refused(k, error.reason);
      throw error;
    }
    const response = NextResponse.redirect(new URL("/admin", k.config.issuerUrl), 303);
    response.cookies.set(SETUP_COOKIE, "", setupCookie(k, 0)[1]);
    return response;
  },
  refuse: signInLimitPage,
});

const shortAddress = (account: string) => (account.length > 14 ? `${account.slice(0, 6)}…${account.slice(-4)}` : account);

/** A refused code's page; the cookie goes, so the dashboard's sign-in no longer comes back here. */
function refused(k: Keyfob, reason: SetupRefusal) {
  const page = htmlPage({
    status: STATUS[reason],
    eyebrow: `${STATUS[reason]} · Set-up refused`,
    title: "Set-up link refused",
    heading: reason === "admin-exists" ? "Keyfob already has an admin" : "This set-up link does not work",
    paragraphs: [
      SETUP_REFUSALS[reason],
      reason === "admin-exists"
        ? "Admins grant the role on the dashboard's Admins page or with: npm run keyfob -- admins grant <address>"
        : "On the server, an operator can also make an account admin with: npm run keyfob -- admins grant <address>",
    ],
    actions: `<a class="button" href="/admin/login">Sign in to the dashboard</a>`,
    headers: { "Cache-Control": "no-store" },
  });
  const response = new NextResponse(page.body, page);
  response.cookies.set(SETUP_COOKIE, "", setupCookie(k, 0)[1]);
  return { response, refused: "access_denied" };
}
