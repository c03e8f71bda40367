/**
 * GET /account/callback: where Auth.js sends the browser after a Google or Apple sign-in started
 * at /account. The upstream identity becomes a login session with Keyfob (refused for a blocked
 * account), the upstream session is dropped at once (Keyfob's session is the only one /account
 * trusts), and the browser goes back to /account; a refusal too, with what to say (the endpoint
 * wrapper counts and logs it).
 */
import { endpoint, otherMethods } from "@/lib/http/endpoint";
import type { Keyfob } from "@/lib/keyfob";
import { logIn } from "@/lib/sessions/login";
import { sessionIdentity, signOut } from "../../_upstream/auth";
import { loginClient, setSessionCookie } from "../../auth/session-cookie";

export const dynamic = "force-dynamic";

export const { POST, PUT, PATCH, DELETE, OPTIONS } = otherMethods("GET");

const seeOther = (k: Keyfob, query = "") =>
  new Response(null, { status: 303, headers: { Location: `${k.config.issuerUrl}/account${query}`, "Cache-Control": "no-store" } });

export const GET = endpoint("account_callback", {
  async answer(k) {
    const identity = await sessionIdentity();
    if (!identity) return seeOther(k);
    try {
      const { token, expiresAt } = await logIn(k, { identity, ...(await loginClient()) });
      await setSessionCookie({ token, expiresAt });
      return seeOther(k);
    } finally {
      await signOut({ redirect: false });
    }
  },
  refuse: (error, { keyfob: k }) => seeOther(k, `?problem=${error.code === "access_denied" ? "blocked" : "unavailable"}`),
});
