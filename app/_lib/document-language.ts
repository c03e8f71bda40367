/**
 * The language of a page's first HTML, `<html lang>`, for the root layout: the hosted login's (its
 * interaction's ui_locales, then Accept-Language), the device and account pages' (Accept-Language),
 * as they render; English for the others (the dashboard is English). The pages' HtmlLang sets it
 * again in the browser, for a page whose language this does not know in advance.
 */
import { headers } from "next/headers";
import { requestLocale } from "@/i18n/server";
import type { Locale } from "@/i18n/locales";
import { interactionLocale } from "../auth/interaction/[id]/locale";
import { PAGE_PATH_HEADER } from "./page-path";

export async function documentLanguage(): Promise<Locale> {
  const path = (await headers()).get(PAGE_PATH_HEADER) ?? "";
  const interaction = /^\/auth\/interaction\/([^/]+)$/.exec(path);
  if (interaction) return interactionLocale(interaction[1]);
  if (path === "/device" || path === "/account") return requestLocale();
  return "en";
}
