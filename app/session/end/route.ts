/**
 * GET|POST /session/end: RP-Initiated Logout 1.0 (end_session_endpoint). lib/ decides
 * (decideEndSession); this handler renders the confirmation, error and signed-out pages, ends
 * the login session and clears its cookies. The confirmation posts back here, from this origin only.
 */
import { cookies } from "next/headers";
import { decideEndSession } from "@/lib/actions/end-session";
import { readParams, type Params } from "@/lib/oauth/params";
import { endSession } from "@/lib/sessions/login-session";
import { keyfob } from "@/lib/runtime";
import { escapeHtml, htmlPage } from "../../_lib/html-page";
import { clearSessionCookie, currentLoginSession } from "../../auth/session-cookie";

export const dynamic = "force-dynamic";

/** What the confirmation form carries back. */
const FORWARDED = ["id_token_hint", "client_id", "post_logout_redirect_uri", "state"];

async function handle(request: Request): Promise<Response> {
  let params: Params;
  try {
    params = await readParams(request);
  } catch {
    return errorPage("The logout request could not be read.");
  }
  const k = keyfob();
  const origin = request.headers.get("origin");
  const confirmed = request.method === "POST" && params.get("logout") === "confirm" && (!origin || origin === new URL(k.config.issuerUrl).origin);
  const session = await currentLoginSession();
  const decision = await decideEndSession(k, params, session, confirmed);
  if (decision.kind === "error") return errorPage(decision.description);
  if (decision.kind === "confirm") return confirmationPage(params, decision.clientName);

  await endSession(k, await clearSessionCookie());
  await clearUpstreamSession();
  if (session) k.audit.record({ action: "session.ended", outcome: "success", accountId: session.accountId, detail: "logout" });
  if (decision.location) return new Response(null, { status: 303, headers: { Location: decision.location, "Cache-Control": "no-store" } });
  return htmlPage({
    status: 200,
    eyebrow: "Signed out",
    title: "You have signed out",
    heading: "You have signed out",
    paragraphs: ["You are no longer signed in with Keyfob in this browser. Applications you used may keep you signed in until you sign out of them too."],
  });
}

/** Auth.js's own session cookie (the upstream login), so a new login starts from scratch. */
async function clearUpstreamSession() {
  const jar = await cookies();
  for (const { name } of jar.getAll()) if (/^(__Secure-)?authjs\.session-token/.test(name)) jar.delete(name);
}

function confirmationPage(params: Params, clientName: string | undefined): Response {
  const hidden = FORWARDED.map((name) => [name, params.get(name)] as const)
    .filter(([, value]) => value !== undefined)
    .map(([name, value]) => `<input type="hidden" name="${name}" value="${escapeHtml(value!)}">`)
    .join("");
  return htmlPage({
    status: 200,
    eyebrow: "Sign out",
    title: "Sign out of Keyfob?",
    heading: "Sign out of Keyfob?",
    paragraphs: [
      clientName ? `${clientName} asks to sign you out of Keyfob in this browser.` : "A page asks to sign you out of Keyfob in this browser.",
      "If you did not ask to sign out, you can ignore this page and stay signed in.",
    ],
    actions: `<form action="/session/end" method="post">${hidden}<input type="hidden" name="logout" value="confirm"><button type="submit">Sign out</button></form>`,
  });
}

function errorPage(description: string): Response {
  return htmlPage({
    status: 400,
    eyebrow: "400 · Logout refused",
    title: "This logout link doesn't work",
    heading: "This logout link doesn't work",
    paragraphs: [description, "You have not been signed out or sent anywhere. Go back to the application and sign out from there."],
  });
}

export const GET = handle;
export const POST = handle;
