/**
 * GET /auth/callback?interaction=ID: where Auth.js sends the browser after a Google or Apple login.
 * The interaction must be the one this browser started (login cookie); the session's identity then
 * completes it (and starts a login session with Keyfob), and the browser goes to the application
 * with the code (303).
 */
import { completeAuthorization } from "@/lib/interactions/interactions";
import { toOAuthError } from "@/lib/http/respond";
import { log } from "@/lib/log";
import { keyfob } from "@/lib/runtime";
import { sessionIdentity } from "../../_upstream/auth";
import { forgetLogin, rememberedLogin } from "../login-cookie";
import { loginClient, setSessionCookie } from "../session-cookie";

export const dynamic = "force-dynamic";

export async function GET(request: Request): Promise<Response> {
  const { issuerUrl } = keyfob().config;
  const seeOther = (location: string) => new Response(null, { status: 303, headers: { Location: location, "Cache-Control": "no-store" } });
  const failed = (reason: string) => seeOther(`${issuerUrl}/auth/error?reason=${reason}`);

  const interactionId = new URL(request.url).searchParams.get("interaction");
  const remembered = await rememberedLogin();
  if (!interactionId || remembered?.interactionId !== interactionId) return failed("browser");
  const identity = await sessionIdentity();
  if (!identity) return failed("session");
  try {
    const { location, newSession } = await completeAuthorization(keyfob(), interactionId, { identity, ...(await loginClient()) });
    await setSessionCookie(newSession);
    await forgetLogin();
    return seeOther(location);
  } catch (caught) {
    const error = toOAuthError(caught);
    log.info("login callback refused", { endpoint: "auth_callback", provider: identity.provider, error: error.code });
    if (error.status < 500 && error.code !== "access_denied") {
      keyfob().audit.record({ action: "login.failed", outcome: error.code, detail: `${identity.provider}: ${error.message}` });
    }
    return failed(error.status >= 500 ? "unavailable" : error.code === "access_denied" ? "blocked" : "expired");
  }
}
