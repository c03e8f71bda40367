/**
 * /auth/error: where a Google/Apple login that did not complete lands (Auth.js's error page, and
 * /auth/callback's refusals). Messages come from a fixed list keyed by the query, never from the
 * query's text. When this browser started a login, it can try again or go back to the application.
 * Its language: the login's ui_locales (when this browser started one), then Accept-Language. No
 * wallet code: only the submit button's script.
 */
import type { Metadata } from "next";
import { getTranslations, setRequestLocale } from "next-intl/server";
import { HtmlLang } from "@/components/login/html-lang";
import { SubmitButton } from "@/components/login/submit-button";
import { AuthShell, buttonStyles, Notice } from "@/components/login/ui";
import { requestLocale } from "@/i18n/server";
import { keyfob } from "@/lib/runtime";
import { cancelLogin } from "../actions";
import { rememberedLogin } from "../login-cookie";

export const dynamic = "force-dynamic";

export async function generateMetadata(): Promise<Metadata> {
  const t = await getTranslations({ locale: await pageLocale(), namespace: "errorPage" });
  return { title: t("metaTitle"), robots: { index: false, follow: false } };
}

const REASONS = [
  "browser",
  "session",
  "expired",
  "blocked",
  "unavailable",
  // Auth.js error codes (https://authjs.dev/reference/core/errors).
  "OAuthCallbackError",
  "AccessDenied",
  "Configuration",
  "Verification",
] as const;
type Reason = (typeof REASONS)[number];

/** The language of the login this browser was finishing, if it is still known; else the browser's. */
async function pageLocale() {
  const login = await rememberedLogin();
  const interaction = login
    ? await keyfob()
        .store.interactions.find(login.interactionId)
        .catch(() => undefined)
    : undefined;
  return requestLocale(interaction?.uiLocales);
}

export default async function AuthErrorPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const params = await searchParams;
  const locale = await pageLocale();
  setRequestLocale(locale);
  const t = await getTranslations({ locale, namespace: "errorPage" });
  const common = await getTranslations({ locale, namespace: "common" });
  const key = [params.reason, params.error].find(
    (value): value is Reason => typeof value === "string" && (REASONS as readonly string[]).includes(value),
  );
  const title = t(`reasons.${key ?? "fallback"}Title`);
  const message = t(`reasons.${key ?? "fallback"}`);
  const login = await rememberedLogin();
  return (
    <AuthShell title={t("title")} lang={locale}>
      <HtmlLang lang={locale} />
      <Notice tone="error" title={title}>
        {message}
      </Notice>
      {login && key !== "browser" && (
        <div className="mt-6 flex flex-col gap-3 sm:flex-row-reverse">
          {login.returnTo && (
            <a className={`${buttonStyles.primary} sm:flex-1`} href={login.returnTo}>
              {t("tryAgain")}
            </a>
          )}
          <form action={cancelLogin} className="sm:flex-1">
            <input type="hidden" name="interaction" value={login.interactionId} />
            <SubmitButton className={`${buttonStyles.secondary} w-full`} pendingLabel={common("returning")}>
              {t("returnToApp")}
            </SubmitButton>
          </form>
        </div>
      )}
    </AuthShell>
  );
}
