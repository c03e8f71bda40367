/**
 * /device: the verification page of the device authorization grant (RFC 8628 3.3), phone-first.
 * Without a code: a form for the code the device shows. With one (typed, or from the device's QR
 * code, verification_uri_complete): the application's logo and name, the code, and "Is this code on
 * your screen?" with when and from where the device asked; Yes opens the hosted login, whose end
 * comes back here (?result=). A code in the URL of a visit from another site's page is not shown:
 * the person types the code their device shows (lib/device/verification.ts openedFromAnotherSite).
 * Looking a code up counts against the user-code limits.
 */
import type { Metadata } from "next";
import type { ReactNode } from "react";
import { headers } from "next/headers";
import { getFormatter, getTranslations } from "next-intl/server";
import { HtmlLang } from "@/components/login/html-lang";
import { isHttpsUrl } from "@/components/login/https-url";
import { SubmitButton } from "@/components/login/submit-button";
import { AuthShell, buttonStyles, Notice } from "@/components/login/ui";
import { reasonText } from "@/i18n/messages";
import { requestLocale } from "@/i18n/server";
import { lookUpUserCode, openedFromAnotherSite, type PendingDevice } from "@/lib/device/verification";
import { toOAuthError } from "@/lib/http/respond";
import { keyfob } from "@/lib/runtime";
import { loginClient } from "../auth/session-cookie";
import { confirmCode, declineCode } from "./actions";

export const dynamic = "force-dynamic";

export async function generateMetadata(): Promise<Metadata> {
  const t = await getTranslations({ locale: await requestLocale(), namespace: "device" });
  return { title: t("metaTitle"), robots: { index: false, follow: false }, referrer: "no-referrer" };
}

type Query = { user_code?: string | string[]; result?: string | string[]; error?: string | string[] };
const one = (value: string | string[] | undefined) => (typeof value === "string" ? value.slice(0, 64) : undefined);
const RESULTS = ["approved", "denied", "expired"] as const;

export default async function DevicePage({ searchParams }: { searchParams: Promise<Query> }) {
  const query = await searchParams;
  const locale = await requestLocale();
  const t = await getTranslations({ locale, namespace: "device" });
  const common = await getTranslations({ locale, namespace: "common" });
  const refusal = await getTranslations({ locale, namespace: "refusal" });

  const result = RESULTS.find((r) => r === one(query.result));
  if (result) {
    return (
      <AuthShell lang={locale} title={t(`${result}Title`)} securedBy={common("securedBy")}>
        <HtmlLang lang={locale} />
        <div data-testid="device-result" data-result={result}>
          <Notice tone={result === "approved" ? "info" : "warning"}>{t(result)}</Notice>
        </div>
      </AuthShell>
    );
  }

  // A code from another site's link is someone's choice: the person types the one on their device.
  const foreign = query.user_code !== undefined && openedFromAnotherSite(await headers(), keyfob().config.issuerUrl);
  const typed = foreign ? undefined : one(query.user_code);
  const errorShown = foreign ? undefined : one(query.error);
  let problem: string | undefined = {
    unknown: reasonText(locale, { code: "user_code_unknown" }),
    too_many: t("tooMany"),
    unavailable: refusal("unavailable"),
  }[errorShown ?? ""];
  let pending: PendingDevice | undefined;
  if (typed && !problem) {
    try {
      pending = await lookUpUserCode(keyfob(), typed, (await loginClient()).ip);
    } catch (caught) {
      const error = toOAuthError(caught);
      problem = error.status === 429 ? t("tooMany") : error.why ? reasonText(locale, error.why) : refusal("unavailable");
    }
  }

  if (pending) {
    const strong = (chunks: ReactNode) => <strong className="font-semibold text-slate-900 dark:text-slate-50">{chunks}</strong>;
    const hidden = (
      <>
        <input type="hidden" name="user_code" value={pending.userCode} />
        <input type="hidden" name="locale" value={locale} />
      </>
    );
    return (
      <AuthShell
        lang={locale}
        brand={{ name: pending.clientName, logoUrl: isHttpsUrl(pending.clientLogoUrl) ? pending.clientLogoUrl : null }}
        securedBy={common("securedBy")}
        title={t("confirmTitle")}
        subtitle={t.rich("confirmSubtitle", { client: pending.clientName, strong })}
      >
        <HtmlLang lang={locale} />
        <p
          className="mb-5 text-center font-mono text-3xl font-semibold tracking-[0.2em] text-slate-900 dark:text-slate-50"
          data-testid="user-code"
        >
          {pending.userCode}
        </p>
        <p className="mb-4 text-center text-sm text-slate-700 dark:text-slate-300" data-testid="device-request">
          {await requestedLine(pending, locale)}
        </p>
        <p className="mb-6 text-sm leading-relaxed text-slate-700 dark:text-slate-300">{t("confirmHint")}</p>
        <div className="flex flex-col gap-3">
          <form action={confirmCode}>
            {hidden}
            <SubmitButton className={`${buttonStyles.primary} w-full`} pendingLabel={t("checking")}>
              {t("confirmYes")}
            </SubmitButton>
          </form>
          <form action={declineCode}>
            {hidden}
            <SubmitButton className={`${buttonStyles.secondary} w-full`} pendingLabel={t("checking")}>
              {t("confirmNo")}
            </SubmitButton>
          </form>
        </div>
      </AuthShell>
    );
  }

  return (
    <AuthShell lang={locale} title={t("enterTitle")} subtitle={t("enterSubtitle")} securedBy={common("securedBy")}>
      <HtmlLang lang={locale} />
      {problem && (
        <div className="mb-4">
          <Notice tone="error" testId="device-problem">
            {problem}
          </Notice>
        </div>
      )}
      {foreign && (
        <div className="mb-4">
          <Notice tone="warning" testId="device-type-code">
            {t("typeCode")}
          </Notice>
        </div>
      )}
      <form method="get" action="/device" className="flex flex-col gap-4">
        <label className="flex flex-col gap-2 text-sm font-medium" htmlFor="user_code">
          {t("codeLabel")}
          <input
            id="user_code"
            name="user_code"
            defaultValue={typed ?? ""}
            required
            autoComplete="one-time-code"
            autoCapitalize="characters"
            autoCorrect="off"
            spellCheck={false}
            inputMode="text"
            maxLength={12}
            placeholder="BCDF-GHJK"
            className="min-h-12 rounded-xl border border-slate-300 bg-white px-4 text-center font-mono text-2xl tracking-[0.2em] uppercase dark:border-slate-600 dark:bg-slate-800"
          />
        </label>
        <button type="submit" className={`${buttonStyles.primary} w-full`}>
          {t("continue")}
        </button>
      </form>
    </AuthShell>
  );
}

/** "Requested 3 minutes ago from IP address 203.0.113.7, by Chrome 120 on Android.": a device that is not theirs shows. */
async function requestedLine({ requestedAt, requestedFrom, requestedBy }: PendingDevice, locale: string): Promise<string> {
  const t = await getTranslations({ locale, namespace: "device" });
  const account = await getTranslations({ locale, namespace: "account" });
  const when = (await getFormatter({ locale })).relativeTime(requestedAt, new Date());
  if (!requestedFrom) return t("requestedUnknown", { when });
  const { browser, os } = requestedBy;
  const device = browser && os ? account("device", { browser, os }) : (browser ?? os);
  return device ? t("requestedBy", { when, ip: requestedFrom, device }) : t("requested", { when, ip: requestedFrom });
}
