/**
 * The languages of the hosted pages (login, error, account, refusal and logout pages), and how one
 * is chosen per request, without locale routing: the authorization request's `ui_locales` (OpenID
 * Connect Core 3.1.2.1, stored with the interaction) first, then the browser's Accept-Language,
 * then English. No Next.js imports: lib/discovery.ts lists these, and route handlers use them.
 */
export const LOCALES = ["en", "de"] as const;
export type Locale = (typeof LOCALES)[number];
export const DEFAULT_LOCALE: Locale = "en";

export function isLocale(value: unknown): value is Locale {
  return typeof value === "string" && (LOCALES as readonly string[]).includes(value);
}

/** The supported locale a language tag asks for: exact, or by its primary language ("de-CH" → "de"). */
function supported(tag: string): Locale | undefined {
  const lower = tag.trim().toLowerCase();
  if (!/^[a-z]{1,8}(-[a-z0-9]{1,8})*$/.test(lower)) return undefined;
  const primary = lower.split("-")[0];
  return LOCALES.find((locale) => locale === lower || locale === primary);
}

/** ui_locales: space-separated BCP 47 tags in order of preference; the first one Keyfob speaks. */
export function fromUiLocales(uiLocales: string | null | undefined): Locale | undefined {
  if (!uiLocales) return undefined;
  for (const tag of uiLocales.split(" ").slice(0, 20)) {
    const locale = tag && supported(tag);
    if (locale) return locale;
  }
  return undefined;
}

/** Accept-Language (RFC 9110 12.5.4): the supported language with the highest weight, earlier first on ties. */
export function fromAcceptLanguage(header: string | null | undefined): Locale | undefined {
  if (!header) return undefined;
  const ranges = header
    .slice(0, 1000)
    .split(",")
    .slice(0, 30)
    .map((part, index) => {
      const [tag, ...params] = part.trim().split(";");
      const q = params.map((p) => /^\s*q\s*=\s*([01](?:\.\d{0,3})?)\s*$/i.exec(p)?.[1]).find((v) => v !== undefined);
      return { tag: tag.trim(), q: q === undefined ? 1 : Number(q), index };
    })
    .filter((range) => range.q > 0 && range.tag !== "*")
    .sort((a, b) => b.q - a.q || a.index - b.index);
  for (const range of ranges) {
    const locale = supported(range.tag);
    if (locale) return locale;
  }
  return undefined;
}

/** The page's language: ui_locales, then Accept-Language, then English. */
export function chooseLocale(uiLocales: string | null | undefined, acceptLanguage: string | null | undefined): Locale {
  return fromUiLocales(uiLocales) ?? fromAcceptLanguage(acceptLanguage) ?? DEFAULT_LOCALE;
}
