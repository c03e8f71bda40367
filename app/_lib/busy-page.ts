import type { Locale } from "@/i18n/locales";
import { translator } from "@/i18n/messages";
import type { OAuthError } from "@/lib/oauth/errors";
import { htmlPage, type HtmlPage } from "./html-page";

/**
 * The page of a request refused by the rate limits (429) or an outage (503, also for a 500: nothing
 * to fix on the browser's side), with Retry-After; undefined for any other refusal.
 */
export function busyPage(
  locale: Locale,
  error: OAuthError,
  words: { tooManyTitle: string; tooMany: string; unavailableTitle: string; unavailable: string },
  more: HtmlPage["paragraphs"] = [],
): Response | undefined {
  if (error.status !== 429 && error.status < 500) return undefined;
  const t = translator(locale, "refusal");
  const limited = error.status === 429;
  const title = limited ? words.tooManyTitle : words.unavailableTitle;
  return htmlPage({
    status: limited ? 429 : 503,
    lang: locale,
    eyebrow: limited ? t("eyebrow429") : t("eyebrow503", { status: 503 }),
    title,
    heading: title,
    paragraphs: [limited ? words.tooMany : words.unavailable, ...more],
    headers: { "Retry-After": String(error.retryAfter ?? 5) },
  });
}
