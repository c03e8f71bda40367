"use client";
/**
 * The root layout writes <html lang> for the pages whose language it knows in advance
 * (app/_lib/document-language.ts); a hosted page whose language was chosen per request
 * (ui_locales, Accept-Language) sets it here too, and also marks its <main> with `lang`.
 */
import { useEffect } from "react";

export function HtmlLang({ lang }: { lang: string }) {
  useEffect(() => {
    document.documentElement.lang = lang;
  }, [lang]);
  return null;
}
