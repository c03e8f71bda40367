/** The locale of a request to a hosted page: `ui_locales` (when the page knows one), then Accept-Language. */
import { headers } from "next/headers";
import { chooseLocale, type Locale } from "./locales";

export async function requestLocale(uiLocales?: string | null): Promise<Locale> {
  return chooseLocale(uiLocales, (await headers()).get("accept-language"));
}
