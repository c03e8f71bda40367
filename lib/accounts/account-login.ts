import { createHash, randomBytes } from "node:crypto";
import { ACCOUNT_CLIENT_ID } from "../clients/client-id";
import type { Keyfob } from "../keyfob";

/**
 * Signing in at /account with any way in (wallet, passkey, Google, Apple): /account is a client of
 * Keyfob itself, as the dashboard is, and sends the browser to the hosted login page. That login
 * starts Keyfob's login session in this browser, which is all /account trusts. The code it sends
 * back is never redeemed: its PKCE verifier is not kept, so the code is of no use to anyone. A
 * fresh login (for a change that needs a recent one) asks for max_age=0, as the dashboard does:
 * the login page then offers no "Continue as" with the session the browser has.
 */

export const accountReturnUri = ({ config }: Pick<Keyfob, "config">) => `${config.issuerUrl}/account/return`;

/** The hosted login's URL for /account (registering /account's client on the way), in the page's language. */
export async function accountLoginUrl(keyfob: Pick<Keyfob, "config" | "store">, locale: string, { fresh = false } = {}): Promise<string> {
  await keyfob.store.clients.ensure(ACCOUNT_CLIENT_ID, "Keyfob account", accountReturnUri(keyfob));
  const query = new URLSearchParams({
    client_id: ACCOUNT_CLIENT_ID,
    redirect_uri: accountReturnUri(keyfob),
    scope: "openid",
    response_type: "code",
    code_challenge: createHash("sha256").update(randomBytes(32).toString("base64url")).digest("base64url"),
    code_challenge_method: "S256",
    ui_locales: locale,
  });
  if (fresh) query.set("max_age", "0");
  return `${keyfob.config.issuerUrl}/auth?${query}`;
}
