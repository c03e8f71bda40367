/**
 * The login page's language for everything under it, its error boundary included: the client
 * components' messages (only the namespaces they use), and <html lang>.
 */
import type { ReactNode } from "react";
import { NextIntlClientProvider } from "next-intl";
import { setRequestLocale } from "next-intl/server";
import { HtmlLang } from "@/components/login/html-lang";
import { pickMessages } from "@/i18n/messages";
import { interactionLocale } from "./locale";

export default async function LoginLayout({ children, params }: { children: ReactNode; params: Promise<{ id: string }> }) {
  const locale = await interactionLocale((await params).id);
  setRequestLocale(locale);
  return (
    <NextIntlClientProvider
      locale={locale}
      messages={pickMessages(locale, ["common", "wallet", "passkey", "loginErrors", "loginErrorTitles", "boundary"])}
      timeZone="UTC"
    >
      <HtmlLang lang={locale} />
      {children}
    </NextIntlClientProvider>
  );
}
