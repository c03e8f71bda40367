/**
 * GET /admin/forbidden: where a signed-in account that is not an admin is sent. A real HTTP 403
 * with a page that shows nothing of the dashboard: who is signed in, how to sign out, and how to
 * sign in with another account. (A route handler, so the status is 403 and not a streamed 200.)
 */
import type { Keyfob } from "@/lib/keyfob";
import { readAdminSession } from "@/lib/admin/session";
import { endpoint, otherMethods } from "@/lib/http/endpoint";
import { htmlPage } from "../../_lib/html-page";
import { sessionToken } from "../_lib/guard";

export const dynamic = "force-dynamic";

export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods("GET");

export const GET = endpoint("admin_forbidden", {
  answer: async (k) => ({ response: await forbiddenPage(k), refused: "access_denied" }),
});

async function forbiddenPage(k: Keyfob): Promise<Response> {
  const account = (await readAdminSession(k, await sessionToken()))?.accountId;
  return htmlPage({
    status: 403,
    eyebrow: "403 · Access denied",
    title: "Access denied",
    heading: "This account is not an admin",
    paragraphs: [
      account
        ? { before: "You are signed in as", code: account, after: ", which is not an admin account." }
        : "You are not signed in with an admin account.",
      "The Keyfob dashboard is open to admins only. An existing admin can grant your account the role; until then there is nothing here for this account.",
    ],
    actions: `<form action="/admin/logout" method="post"><button type="submit">Sign out</button></form>
    <a class="button" href="/admin/login">Sign in with another account</a>`,
  });
}
