/**
 * /account: a signed-in person (the browser's login session with Keyfob: wallet, passkey, Google,
 * Apple) sees their Keyfob account: its address, its ways in (wallets, Google, Apple, passkeys)
 * with their last use, its login sessions with device, place and last use, the third-party
 * applications it allowed (with their scopes); they can revoke an application's access, link a
 * wallet, add, name and remove passkeys, unlink a way in (never the last), sign sessions out and
 * delete the account. A session whose wallet signature the chain RPC vouched for is told why it is
 * offered none of the changes to ways in and no deletion; a change refused for an old login offers
 * "Sign in again". Signed out, it offers Google and Apple here and every way in through the hosted
 * login page. Its language: the browser's Accept-Language.
 */
import type { Metadata } from "next";
import { NextIntlClientProvider } from "next-intl";
import { getTranslations, setRequestLocale } from "next-intl/server";
import { AddPasskey } from "@/components/account/add-passkey";
import { LinkWallet } from "@/components/account/link-wallet";
import { Applications, DeleteAccount, Sessions, WaysIn } from "@/components/account/self-service";
import { SignInAgain } from "@/components/account/sign-in-again";
import { EnsName, hasEnsName } from "@/components/login/ens-name";
import { HtmlLang } from "@/components/login/html-lang";
import { PasskeyIcon } from "@/components/login/icons";
import { SubmitButton } from "@/components/login/submit-button";
import { UpstreamButtons } from "@/components/login/upstream-buttons";
import { AuthShell, buttonStyles, Divider, Notice } from "@/components/login/ui";
import { Web3Providers } from "@/components/providers";
import { pickMessages, reasonText } from "@/i18n/messages";
import { requestLocale } from "@/i18n/server";
import { accountOverview } from "@/lib/accounts/self-service";
import { isContractLogin } from "@/lib/accounts/sensitive-changes";
import { REASONS, type ReasonCode } from "@/lib/oauth/reasons";
import { keyfob } from "@/lib/runtime";
import { accountLinkNonce } from "@/lib/siwe/login";
import { upstreamProviders } from "../_upstream/auth";
import { type AccountDone, accountSignIn, accountSignOut, finishAddingPasskey, linkWalletToAccount, startAddingPasskey } from "./actions";
import { signedInAccount } from "./identity";

export const dynamic = "force-dynamic";

export async function generateMetadata(): Promise<Metadata> {
  const t = await getTranslations({ locale: await requestLocale(), namespace: "account" });
  return { title: t("metaTitle"), robots: { index: false, follow: false } };
}

const DONE: AccountDone[] = ["unlinked", "renamed", "removed", "signedOut", "signedOutEverywhere", "revoked", "deleted"];

export default async function AccountPage({ searchParams }: { searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const { problem, done, refused } = await searchParams;
  const locale = await requestLocale();
  setRequestLocale(locale);
  const t = await getTranslations({ locale, namespace: "account" });
  const common = await getTranslations({ locale, namespace: "common" });
  const app = keyfob();
  const account = await signedInAccount();
  const providers = upstreamProviders(app.config);
  // What the last form did: a known outcome, or a refusal's reason (anything else: "try again").
  const outcome = DONE.includes(done as AccountDone) ? (
    <Notice tone="info" title={t("doneTitle")} testId="account-outcome">
      {t(`done.${done as AccountDone}`)}
    </Notice>
  ) : typeof refused === "string" ? (
    <Notice
      tone="error"
      title={t("refusedTitle")}
      testId="account-outcome"
      actions={refused === "login_not_recent" ? <SignInAgain /> : undefined}
    >
      {Object.hasOwn(REASONS, refused) ? reasonText(locale, { code: refused as ReasonCode }) : t("problems.unavailable")}
    </Notice>
  ) : null;

  if (!account) {
    return (
      <AuthShell title={t("title")} subtitle={t("signInPrompt")} lang={locale}>
        <HtmlLang lang={locale} />
        {outcome && <div className="mb-5">{outcome}</div>}
        {(problem === "blocked" || problem === "unavailable") && (
          <div className="mb-5">
            <Notice tone="error" title={t("problemTitle")}>
              {t(`problems.${problem}`)}
            </Notice>
          </div>
        )}
        {providers.length > 0 && (
          <>
            <UpstreamButtons providers={providers} action={accountSignIn} />
            <Divider>{common("or")}</Divider>
          </>
        )}
        {/* A plain link: the hosted login page loads whole (lib/accounts/account-login.ts). */}
        <a href="/account/login" className={buttonStyles.option}>
          <PasskeyIcon />
          {t("otherMethods")}
        </a>
        <p className="mt-3 text-center text-xs leading-relaxed text-slate-600 dark:text-slate-300">{t("otherMethodsHelp")}</p>
      </AuthShell>
    );
  }

  const provider = t(`providers.${account.provider}`);
  const overview = await accountOverview(app, account.accountId);
  const ens = overview.identities.find((identity) => identity.own)?.ens;
  // Only the RPC vouched for this login: no way in is added or taken away, nor the account deleted (the server refuses them too).
  const mayChange = !isContractLogin(account.login);
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
        messages={pickMessages(locale, ["common", "wallet", "passkey", "loginErrors", "loginErrorTitles", "account"])}
        timeZone="UTC"
      >
        {outcome && <div className="mb-5">{outcome}</div>}
        {!mayChange && (
          <div className="mb-5">
            <Notice tone="warning" title={t("contractTitle")} testId="contract-session" actions={<SignInAgain label="signInAnotherWay" />}>
              {reasonText(locale, { code: "contract_session" })}
            </Notice>
          </div>
        )}
        <dl className="rounded-xl bg-slate-50 p-4 ring-1 ring-slate-200 dark:bg-slate-800 dark:ring-slate-700">
          <dt className="text-xs font-medium uppercase tracking-wider text-slate-600 dark:text-slate-300">{t("address")}</dt>
          <dd className="mt-1 break-all font-mono text-sm text-slate-900 dark:text-slate-50" data-testid="account-address">
            {account.accountId}
          </dd>
          {hasEnsName(ens) && (
            <dd className="mt-2 text-sm text-slate-900 dark:text-slate-50">
              <EnsName address={account.accountId} profile={ens} />
            </dd>
          )}
        </dl>

        <WaysIn overview={overview} mayChange={mayChange} />
        {mayChange && (
          <>
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
          </>
        )}

        <Sessions currentSessionId={account.sessionId} sessions={overview.sessions} />
        {overview.consents.length > 0 && <Applications consents={overview.consents} />}
        {mayChange && <DeleteAccount />}
      </NextIntlClientProvider>
    </AuthShell>
  );
}
