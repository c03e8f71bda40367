/**
 * The login page's interaction and language, looked up once per request (the layout and the page
 * both ask): the interaction's ui_locales, then Accept-Language, then English.
 */
import { cache } from "react";
import { requestLocale } from "@/i18n/server";
import { pendingInteraction } from "@/lib/interactions/interactions";
import { consentRequest } from "@/lib/interactions/consent";
import { keyfob } from "@/lib/runtime";
import { currentLoginSession } from "../../session-cookie";

export const loadInteraction = cache((id: string) => pendingInteraction(keyfob(), id));

export const interactionLocale = cache(async (id: string) => {
  // The page reports a database failure itself (its error boundary); the language falls back.
  const interaction = await loadInteraction(id).catch(() => undefined);
  // One awaiting consent is no longer pending: the consent page keeps its language.
  const consent = interaction ? undefined : await consentRequest(keyfob(), id, await currentLoginSession()).catch(() => undefined);
  return requestLocale(interaction?.uiLocales ?? consent?.uiLocales);
});
