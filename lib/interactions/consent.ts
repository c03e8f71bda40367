/**
 * The hosted login's consent step (OpenID Connect Core 3.1.2.4), for a client that requires consent
 * (lib/consent/grants.ts): after the login, an interaction that needs the user's consent waits for
 * it (outcome "consent", bound to the login session that logged in). The consent page shows the
 * client and the scopes asked for; allowing records the grant and sends the code, declining sends
 * access_denied. Each decision is single use, so only one of them (or of two tabs) counts.
 */
import { authorizationResponse } from "../clients/redirect-uri";
import { consentScope, grantedScopes, recordConsent } from "../consent/grants";
import type { Keyfob } from "../keyfob";
import { isOpaque } from "../oauth/opaque";
import type { LoginSession } from "../sessions/login-session";
import { expiredInteraction, issueAuthorizationCode } from "./interactions";

/**
 * What the consent page shows of an interaction awaiting this session's consent: undefined when it
 * is not one (unknown, expired, decided, or another session's). Each scope says whether the
 * account granted it the client before.
 */
export async function consentRequest(keyfob: Pick<Keyfob, "clock" | "store">, interactionId: string, session: LoginSession | undefined) {
  if (!isOpaque(interactionId)) return undefined;
  const interaction = await keyfob.store.interactions.findWithClient(interactionId);
  if (
    !session ||
    interaction?.outcome !== "consent" ||
    interaction.consentSession !== session.id ||
    interaction.expiresAt <= keyfob.clock.now()
  )
    return undefined;
  const granted = new Set(await grantedScopes(keyfob, session.accountId, interaction.clientId));
  return {
    id: interaction.id,
    clientId: interaction.clientId,
    clientName: interaction.client.name,
    clientLogoUrl: interaction.client.logoUrl,
    redirectUri: interaction.redirectUri,
    scope: consentScope(interaction.scope, interaction.client).map((scope) => ({ scope, granted: granted.has(scope) })),
    uiLocales: interaction.uiLocales ?? undefined,
  };
}

/** "Allow": the grant (with the scopes granted before) is recorded and the code sent; where to send the browser. */
export async function giveConsent(
  keyfob: Pick<Keyfob, "config" | "clock" | "store" | "audit">,
  interactionId: string,
  session: LoginSession,
): Promise<string> {
  if (!isOpaque(interactionId)) throw expiredInteraction();
  const client = (await keyfob.store.interactions.findWithClient(interactionId))?.client;
  const interaction = await keyfob.store.interactions.decideConsent(interactionId, session.id, keyfob.clock.now(), "login");
  if (!client || !interaction) throw expiredInteraction();
  await recordConsent(keyfob, session.accountId, interaction.clientId, consentScope(interaction.scope, client));
  return issueAuthorizationCode(keyfob, interaction, session.identity, session);
}

/** "Deny": back to the application with access_denied (RFC 6749 4.1.2.1), its state and iss; audited. */
export async function declineConsent(
  keyfob: Pick<Keyfob, "config" | "clock" | "store" | "audit">,
  interactionId: string,
  session: LoginSession,
): Promise<string> {
  if (!isOpaque(interactionId)) throw expiredInteraction();
  const interaction = await keyfob.store.interactions.decideConsent(interactionId, session.id, keyfob.clock.now(), "cancelled");
  if (!interaction) throw expiredInteraction();
  keyfob.audit.record({ action: "consent.denied", outcome: "access_denied", clientId: interaction.clientId, accountId: session.accountId });
  return authorizationResponse(interaction.redirectUri, {
    error: "access_denied",
    error_description: "the user did not allow the application access",
    state: interaction.state ?? undefined,
    iss: keyfob.config.issuerUrl,
  });
}
