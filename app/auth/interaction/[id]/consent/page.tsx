/**
 * /auth/interaction/[id]/consent: the hosted login's consent page, for a client that requires
 * consent (lib/interactions/consent.ts). The application's logo and name lead it; it says who is
 * signed in and, in words, what the application asks for (what the account allowed it before
 * marked so), with Allow and Deny. Only the browser that started the login, in the login session
 * that logged in, sees it; otherwise it says the request is no longer available.
 */
import type { Metadata } from "next";
import type { ReactNode } from "react";
import { getTranslations, setRequestLocale } from "next-intl/server";
import { isHttpsUrl } from "@/components/login/https-url";
import { SubmitButton } from "@/components/login/submit-button";
import { AuthShell, buttonStyles, Notice } from "@/components/login/ui";
import { keyfob } from "@/lib/runtime";
import { consentRequest } from "@/lib/interactions/consent";
import { allowConsent, denyConsent } from "../../../actions";
import { startedInThisBrowser } from "../../../login-cookie";
import { currentLoginSession } from "../../../session-cookie";
import { interactionLocale } from "../locale";

export const dynamic = "force-dynamic";

export async function generateMetadata({ params }: { params: Promise<{ id: string }> }): Promise<Metadata> {
  const t = await getTranslations({ locale: await interactionLocale((await params).id), namespace: "consent" });
  return { title: t("metaTitle"), robots: { index: false, follow: false }, referrer: "no-referrer" };
}

export default async function ConsentPage({ params }: { params: Promise<{ id: string }> }) {
  const { id } = await params;
  const locale = await interactionLocale(id);
  setRequestLocale(locale);
  const t = await getTranslations({ locale, namespace: "consent" });
  const common = await getTranslations({ locale, namespace: "common" });
  const session = await currentLoginSession();
  const request = (await startedInThisBrowser(id)) ? await consentRequest(keyfob(), id, session) : undefined;
  if (!request || !session) {
    return (
      <AuthShell title={t("title")} lang={locale}>
        <Notice tone="error" title={t("goneTitle")}>
          {t("gone")}
        </Notice>
      </AuthShell>
    );
  }
  const client = request.clientName;
  const strong = (chunks: ReactNode) => <strong className="font-semibold text-slate-900 dark:text-slate-50">{chunks}</strong>;
  const decision = (action: (form: FormData) => Promise<void>, label: string, pending: string, style: string) => (
    <form action={action} className="sm:flex-1">
      <input type="hidden" name="interaction" value={request.id} />
      <SubmitButton className={`${style} w-full`} pendingLabel={pending}>
        {label}
      </SubmitButton>
    </form>
  );
  return (
    <AuthShell
      lang={locale}
      brand={{ name: client, logoUrl: isHttpsUrl(request.clientLogoUrl) ? request.clientLogoUrl : null }}
      securedBy={common("securedBy")}
      title={t("title")}
      subtitle={t.rich("subtitle", { client, strong })}
    >
      <p className="text-sm text-slate-700 dark:text-slate-300" data-testid="consent-account">
        {t("account", { account: session.identity.email ?? session.accountId })}
      </p>
      <h2 className="mt-5 text-sm font-semibold text-slate-900 dark:text-slate-50">{t("willBeAbleTo", { client })}</h2>
      <ul className="mt-2 space-y-2 text-sm text-slate-800 dark:text-slate-200" data-testid="consent-scopes">
        {request.scope.map(({ scope, granted }) => (
          <li key={scope} data-scope={scope} className="flex items-start gap-2">
            <span aria-hidden="true" className="mt-1.5 size-1.5 shrink-0 rounded-full bg-indigo-600 dark:bg-indigo-400" />
            <span>
              {t(`scopes.${scope}` as "scopes.openid")}{" "}
              <span className="text-xs text-slate-600 dark:text-slate-400">({granted ? t("grantedBefore") : t("new")})</span>
            </span>
          </li>
        ))}
      </ul>
      <p className="mt-5 text-xs leading-relaxed text-slate-700 dark:text-slate-300">
        {t.rich("redirect", { host: new URL(request.redirectUri).host, strong })} {t("revokeLater")}
      </p>
      <div className="mt-6 flex flex-col gap-3 sm:flex-row-reverse">
        {decision(allowConsent, t("allow"), t("allowing"), buttonStyles.primary)}
        {decision(denyConsent, t("deny"), t("denying"), buttonStyles.secondary)}
      </div>
    </AuthShell>
  );
}
