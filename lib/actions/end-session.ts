import { normalizeClientId } from "../clients/client-id";
import { authorizationResponse } from "../clients/redirect-uri";
import type { Keyfob } from "../keyfob";
import { OAuthError } from "../oauth/errors";
import type { Params } from "../oauth/params";
import type { Reason, ReasonCode } from "../oauth/reasons";
import type { LoginSession } from "../sessions/login-session";
import { verifyIdTokenHint } from "../tokens/id-token-hint";

/**
 * RP-Initiated Logout 1.0 (`GET|POST /session/end`): what to do with a logout request.
 * - A request bound to a client (a valid id_token_hint) whose account is the browser's session's,
 *   or with no session left, logs out at once and returns to post_logout_redirect_uri (registered
 *   for that client, exactly) with `state`, or to Keyfob's signed-out page.
 * - Any other request asks the user first (someone else's link must not log them out), and never
 *   returns to a post_logout_redirect_uri: without a valid hint nothing vouches for the URI.
 * - An invalid id_token_hint, a client_id other than the hint's, or an unregistered
 *   post_logout_redirect_uri is an error page: never a redirect.
 */
export type EndSessionDecision =
  | { kind: "error"; reason: Reason }
  | { kind: "confirm"; clientName?: string }
  | { kind: "logout"; location?: string };

export async function decideEndSession(
  keyfob: Pick<Keyfob, "config" | "store" | "keys">,
  params: Params,
  session: LoginSession | undefined,
  confirmed: boolean,
): Promise<EndSessionDecision> {
  const hint = params.get("id_token_hint");
  const clientId = params.get("client_id");
  const redirectUri = params.get("post_logout_redirect_uri");
  const refused = (code: ReasonCode) => ({ kind: "error" as const, reason: { code } });
  let hinted: { clientId: string; accountId: string } | undefined;
  if (hint) {
    try {
      hinted = await verifyIdTokenHint(keyfob, hint);
    } catch (error) {
      if (error instanceof OAuthError) return refused("invalid_id_token_hint");
      throw error;
    }
    if (clientId && clientId !== hinted.clientId) return refused("id_token_hint_other_client");
  }
  const client = await clientOf(keyfob, hinted?.clientId ?? clientId, redirectUri);
  if (redirectUri && hinted && !client?.registered) return refused("unregistered_post_logout_redirect_uri");
  const bound = hinted !== undefined && (!session || session.accountId === hinted.accountId);
  if (!bound && !confirmed) return { kind: "confirm", clientName: client?.name };
  const location = hinted && redirectUri ? authorizationResponse(redirectUri, { state: params.get("state") }) : undefined;
  return { kind: "logout", location };
}

async function clientOf({ store }: Pick<Keyfob, "store">, clientId: string | undefined, redirectUri: string | undefined) {
  if (!clientId) return undefined;
  const client = await store.clients.findWithPostLogoutUri(normalizeClientId(clientId), redirectUri ?? "");
  return client?.enabled ? { name: client.name, registered: client.postLogoutUriRegistered } : undefined;
}
