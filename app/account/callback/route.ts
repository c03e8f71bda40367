/**
 * GET /account/callback: where Auth.js sends the browser after a Google or Apple sign-in started
 * at /account. The upstream identity becomes a login session with Keyfob (refused for a blocked
 * account), the upstream session is dropped at once (Keyfob's session is the only one /account
 * trusts), and the browser goes back to /account.
 */
import { toOAuthError } from "@/lib/http/respond";
import { log } from "@/lib/log";
import { keyfob } from "@/lib/runtime";
import { logIn } from "@/lib/sessions/login";
import { sessionIdentity, signOut } from "../../_upstream/auth";
import { loginClient, setSessionCookie } from "../../auth/session-cookie";

export const dynamic = "force-dynamic";

export async function GET(): Promise<Response> {
  const seeOther = (query = "") => new Response(null, { status: 303, headers: { Location: `${keyfob().config.issuerUrl}/account${query}`, "Cache-Control": "no-store" } });
  const identity = await sessionIdentity();
  if (!identity) return seeOther();
  try {
    const { token, expiresAt } = await logIn(keyfob(), { identity, ...(await loginClient()) });
    await setSessionCookie({ token, expiresAt });
    return seeOther();
  } catch (caught) {
    const error = toOAuthError(caught);
    log.info("account sign-in refused", { endpoint: "account_callback", provider: identity.provider, error: error.code });
    return seeOther(`?problem=${error.code === "access_denied" ? "blocked" : "unavailable"}`);
  } finally {
    await signOut({ redirect: false });
  }
}
