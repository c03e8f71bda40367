/**
 * The message catalogs (messages/<locale>.json), for next-intl's request config and for the pages
 * that route handlers write themselves (the /auth refusal page, the /session/end pages).
 */
import { createTranslator } from "use-intl/core";
import de from "../messages/de.json";
import en from "../messages/en.json";
import type { Reason } from "../lib/oauth/reasons";
import type { Locale } from "./locales";

export type Messages = typeof en;
export const MESSAGES: Record<Locale, Messages> = { en, de };

/** A translator for one namespace of a locale's catalog, outside React (route handlers). */
export function translator<N extends keyof Messages>(locale: Locale, namespace: N) {
  return createTranslator({ locale, messages: MESSAGES[locale], namespace });
}

/** The namespaces a page's client components need, and only those (they travel with the page). */
export function pickMessages<N extends keyof Messages>(locale: Locale, namespaces: N[]): Pick<Messages, N> {
  return Object.fromEntries(namespaces.map((n) => [n, MESSAGES[locale][n]])) as Pick<Messages, N>;
}

/** Why lib/ refused (a reason code and its parameters, lib/oauth/reasons.ts), in the locale's words. */
export function reasonText(locale: Locale, { code, params }: Reason): string {
  return translator(locale, "reasons")(code, params as never);
}
