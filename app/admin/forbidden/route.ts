/**
 * GET /admin/forbidden: where a signed-in account that is not an admin is sent. A real HTTP 403
 * with a page that shows nothing of the dashboard: who is signed in, how to sign out, and how to
 * sign in with another account. (A route handler, so the status is 403 and not a streamed 200.)
 */
import { cookies } from "next/headers";
import { ADMIN_SESSION_COOKIE, readAdminSession } from "@/lib/admin/session";
import { keyfob } from "@/lib/runtime";

export const dynamic = "force-dynamic";

const escape = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

export async function GET(): Promise<Response> {
  const account = await readAdminSession(keyfob(), (await cookies()).get(ADMIN_SESSION_COOKIE)?.value);
  const who = account
    ? `You are signed in as <code>${escape(account)}</code>, which is not an admin account.`
    : "You are not signed in with an admin account.";
  const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>Access denied · Keyfob admin</title>
<style>
  body { margin: 0; min-height: 100dvh; display: grid; place-items: center; background: #f8fafc; color: #0f172a;
         font: 16px/1.5 ui-sans-serif, system-ui, -apple-system, "Segoe UI", sans-serif; }
  main { box-sizing: border-box; width: calc(100% - 2rem); max-width: 28rem; padding: 2rem; background: #fff;
         border-radius: 1rem; box-shadow: 0 1px 2px rgb(0 0 0 / .05); outline: 1px solid #e2e8f0; }
  h1 { margin: 0 0 .5rem; font-size: 1.375rem; letter-spacing: -.01em; }
  p { margin: 0 0 1rem; color: #475569; font-size: .9375rem; }
  code { font: 13px ui-monospace, SFMono-Regular, Menlo, monospace; color: #0f172a; word-break: break-all; }
  .actions { display: flex; flex-wrap: wrap; gap: .5rem; margin-top: 1.5rem; }
  button, a.button { box-sizing: border-box; display: inline-flex; align-items: center; min-height: 2.5rem; padding: 0 1rem;
         border-radius: .5rem; font-family: inherit; font-size: .875rem; font-weight: 600; line-height: 1; cursor: pointer;
         text-decoration: none; }
  button { background: #4f46e5; color: #fff; border: 0; }
  a.button { background: #fff; color: #1e293b; border: 1px solid #cbd5e1; }
  :focus-visible { outline: 2px solid #4f46e5; outline-offset: 2px; }
</style>
</head>
<body>
<main>
  <p style="margin:0 0 .25rem;font-size:.75rem;font-weight:600;letter-spacing:.06em;text-transform:uppercase;color:#b91c1c">403 · Access denied</p>
  <h1>This account is not an admin</h1>
  <p>${who}</p>
  <p>The Keyfob dashboard is open to admins only. An existing admin can grant your account the role; until then there is nothing here for this account.</p>
  <div class="actions">
    <form action="/admin/logout" method="post"><button type="submit">Sign out</button></form>
    <a class="button" href="/admin/login">Sign in with another account</a>
  </div>
</main>
</body>
</html>`;
  return new Response(html, {
    status: 403,
    headers: { "Content-Type": "text/html; charset=utf-8", "Cache-Control": "no-store", "X-Robots-Tag": "noindex" },
  });
}
