"use client";
/**
 * The root layout writes <html lang="en"> for every page; a hosted page whose language was chosen
 * per request (ui_locales, Accept-Language) sets it here, and also marks its <main> with `lang`.
 */
import { useEffect } from "react";

export function HtmlLang({ lang }: { lang: string }) {
  useEffect(() => {
    document.documentElement.lang = lang;
  }, [lang]);
  return null;
}
