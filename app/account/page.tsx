/**
 * /account: a signed-in person (Google or Apple on this page, or the browser's login session with
 * Keyfob: wallet, passkey, Google, Apple) sees their Keyfob account (its address), its passkeys,
 * and can add a passkey or link a wallet, which then sign in to the same account. Its language:
 * the browser's Accept-Language.
 */
import type { Metadata } from "next";
import { NextIntlClientProvider } from "next-intl";
import { getFormatter, getTranslations, setRequestLocale } from "next-intl/server";
import { AddPasskey } from "@/components/account/add-passkey";
import { LinkWallet } from "@/components/account/link-wallet";
import { HtmlLang } from "@/components/login/html-lang";
import { SubmitButton } from "@/components/login/submit-button";
import { UpstreamButtons } from "@/components/login/upstream-buttons";
import { AuthShell, buttonStyles, Notice } from "@/components/login/ui";
import { Web3Providers } from "@/components/providers";
import { pickMessages } from "@/i18n/messages";
import { requestLocale } from "@/i18n/server";
import { listPasskeys } from "@/lib/passkeys/passkeys";
import { keyfob } from "@/lib/runtime";
import { accountLinkNonce } from "@/lib/siwe/login";
import { upstreamProviders } from "../_upstream/auth";
import { accountSignIn, accountSignOut, finishAddingPasskey, linkWalletToAccount, startAddingPasskey } from "./actions";
import { signedInAccount } from "./identity";

export const dynamic = "force-dynamic";

export async function generateMetadata(): Promise<Metadata> {
  const t = await getTranslations({ locale: await requestLocale(), namespace: "account" });
  return { title: t("metaTitle"), robots: { index: false, follow: false } };
}

export default async function AccountPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const problem = (await searchParams).problem;
  const locale = await requestLocale();
  setRequestLocale(locale);
  const t = await getTranslations({ locale, namespace: "account" });
  const format = await getFormatter({ locale });
  const app = keyfob();
  const account = await signedInAccount();
  const providers = upstreamProviders(app.config);

  if (!account) {
    return (
      <AuthShell title={t("title")} subtitle={t("signInPrompt")} lang={locale}>
        <HtmlLang lang={locale} />
        {(problem === "blocked" || problem === "unavailable") && (
          <Notice tone="error" title={t("problemTitle")}>
            {t(`problems.${problem}`)}
          </Notice>
        )}
        {providers.length === 0 ? (
          <Notice tone="info" title={t("nothingTitle")}>
            {t("nothing")}
          </Notice>
        ) : (
          <UpstreamButtons providers={providers} action={accountSignIn} />
        )}
      </AuthShell>
    );
  }

  const provider = t(`providers.${account.provider}`);
  const passkeys = await listPasskeys(app, account.accountId);
  const date = (value: Date) => format.dateTime(value, { dateStyle: "medium", timeZone: "UTC" });
  return (
    <AuthShell
      lang={locale}
      title={t("title")}
      subtitle={
        account.email
          ? t.rich("signedInAs", {
              provider,
              email: account.email,
              strong: (chunks) => <strong className="font-semibold text-slate-900 dark:text-slate-50">{chunks}</strong>,
            })
          : t("signedInWith", { provider })
      }
      footer={
        <form action={accountSignOut}>
          <SubmitButton className={buttonStyles.quiet} pendingLabel={t("signingOut")}>
            {t("signOut")}
          </SubmitButton>
        </form>
      }
    >
      <HtmlLang lang={locale} />
      <NextIntlClientProvider
        locale={locale}
        messages={pickMessages(locale, ["common", "wallet", "passkey", "loginErrors", "account"])}
        timeZone="UTC"
      >
        <dl className="rounded-xl bg-slate-50 p-4 ring-1 ring-slate-200 dark:bg-slate-800 dark:ring-slate-700">
          <dt className="text-xs font-medium uppercase tracking-wider text-slate-600 dark:text-slate-300">{t("address")}</dt>
          <dd className="mt-1 break-all font-mono text-sm text-slate-900 dark:text-slate-50" data-testid="account-address">
            {account.accountId}
          </dd>
        </dl>

        <h2 className="mt-6 text-sm font-semibold text-slate-900 dark:text-slate-50">{t("passkeysTitle")}</h2>
        <p className="mb-3 mt-1 text-sm leading-relaxed text-slate-600 dark:text-slate-300">{t("passkeysHelp")}</p>
        {passkeys.length === 0 ? (
          <p className="mb-3 text-sm text-slate-600 dark:text-slate-300">{t("passkeysNone")}</p>
        ) : (
          <ul className="mb-3 space-y-2" data-testid="passkeys">
            {passkeys.map((passkey) => (
              <li key={passkey.id} className="rounded-lg border border-slate-200 px-3 py-2 text-sm dark:border-slate-700">
                <span className="font-medium text-slate-900 dark:text-slate-50">
                  {t("passkeyItem", { created: date(passkey.createdAt) })}
                </span>
                <span className="block text-xs text-slate-600 dark:text-slate-300">
                  {passkey.lastUsedAt ? t("passkeyLastUsed", { used: date(passkey.lastUsedAt) }) : t("passkeyNeverUsed")} ·{" "}
                  {passkey.backedUp ? t("passkeySynced") : t("passkeyDevice")}
                </span>
              </li>
            ))}
          </ul>
        )}
        <AddPasskey start={startAddingPasskey} finish={finishAddingPasskey} />

        <h2 className="mt-8 text-sm font-semibold text-slate-900 dark:text-slate-50">{t("linkTitle")}</h2>
        <p className="mb-4 mt-1 text-sm leading-relaxed text-slate-600 dark:text-slate-300">{t("linkHelp")}</p>
        <Web3Providers
          chainId={app.config.chainId}
          walletConnect={
            app.config.walletConnectProjectId
              ? { projectId: app.config.walletConnectProjectId, issuerUrl: app.config.issuerUrl }
              : undefined
          }
        >
          <LinkWallet
            accountId={account.accountId}
            nonce={accountLinkNonce(app, account.accountId)}
            issuerUrl={app.config.issuerUrl}
            chainId={app.config.chainId}
            serverTime={Date.now()}
            link={linkWalletToAccount}
          />
        </Web3Providers>
      </NextIntlClientProvider>
    </AuthShell>
  );
}
