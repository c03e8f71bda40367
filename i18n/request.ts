/**
 * next-intl's request configuration, without locale routing: a page that knows its locale (the
 * login page: the interaction's ui_locales, then Accept-Language) asks for it explicitly; anything
 * else gets the browser's Accept-Language, then English.
 */
import { headers } from "next/headers";
import { getRequestConfig } from "next-intl/server";
import { MESSAGES } from "./messages";
import { chooseLocale, isLocale } from "./locales";

export default getRequestConfig(async ({ requestLocale, locale: explicit }) => {
  const requested = explicit ?? (await requestLocale);
  const locale = isLocale(requested) ? requested : chooseLocale(undefined, (await headers()).get("accept-language"));
  return { locale, messages: MESSAGES[locale], timeZone: "UTC" };
});
