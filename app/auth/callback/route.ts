/**
 * GET /auth/callback?interaction=ID: where Auth.js sends the browser after a Google or Apple login.
 * The interaction must be the one this browser started (login cookie); the session's identity then
 * completes it (and starts a login session with Keyfob), and the browser goes to the application
 * with the code (303). The endpoint wrapper counts and logs refusals.
 */
import { endpoint, otherMethods } from "@/lib/http/endpoint";
import { toOAuthError } from "@/lib/http/respond";
import { completeAuthorization } from "@/lib/interactions/interactions";
import type { Keyfob } from "@/lib/keyfob";
import { sessionIdentity } from "../../_upstream/auth";
import { forgetLogin, rememberedLogin, rememberMethod } from "../login-cookie";
import { loginClient, setSessionCookie } from "../session-cookie";

export const dynamic = "force-dynamic";

export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods("GET");

const seeOther = (location: string) => new Response(null, { status: 303, headers: { Location: location, "Cache-Control": "no-store" } });
const failed = (k: Keyfob, reason: string) => seeOther(`${k.config.issuerUrl}/auth/error?reason=${reason}`);

export const GET = endpoint("auth_callback", {
  async answer(k, request) {
    const interactionId = new URL(request.url).searchParams.get("interaction");
    const remembered = await rememberedLogin();
    if (!interactionId || remembered?.interactionId !== interactionId) return { response: failed(k, "browser"), refused: "other_browser" };
    const identity = await sessionIdentity();
    if (!identity) return { response: failed(k, "session"), refused: "no_session" };
    try {
      const { location, newSession } = await completeAuthorization(k, interactionId, { identity, ...(await loginClient()) });
      await setSessionCookie(newSession);
      await rememberMethod(identity.provider);
      await forgetLogin();
      return seeOther(location);
    } catch (caught) {
      // Audited here, where the provider's name is known; the wrapper logs and refuses it.
      const error = toOAuthError(caught);
      if (error.status < 500 && error.code !== "access_denied") {
        k.audit.record({ action: "login.failed", outcome: error.code, detail: `${identity.provider}: ${error.message}` });
      }
      throw error;
    }
  },
  refuse: (error, { keyfob: k }) => failed(k, error.status >= 500 ? "unavailable" : error.code === "access_denied" ? "blocked" : "expired"),
});
