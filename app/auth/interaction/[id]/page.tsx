/**
 * /auth/interaction/[id]: the hosted login page of an authorization request that /auth accepted.
 * The application's logo and name lead it; it offers the browser's session ("Continue as"), Google
 * and Apple (when configured), a passkey, and a wallet (browser wallets, WalletConnect when
 * configured). The interaction must be one this browser started (its cookie), unexpired and
 * unfinished. Its language: the request's ui_locales, then Accept-Language (layout.tsx).
 */
import type { Metadata } from "next";
import type { ReactNode } from "react";
import { redirect } from "next/navigation";
import { getTranslations, setRequestLocale } from "next-intl/server";
import { EndedLogin } from "@/components/login/ended-login";
import { hasEnsName } from "@/components/login/ens-name";
import { isHttpsUrl } from "@/components/login/https-url";
import { PasskeyLogin } from "@/components/login/passkey-login";
import { SubmitButton } from "@/components/login/submit-button";
import { AuthShell, buttonStyles, Divider } from "@/components/login/ui";
import { ContinueAsSession, UpstreamButtons } from "@/components/login/upstream-buttons";
import { WalletLauncher } from "@/components/login/wallet-launcher";
import { storedEnsProfile } from "@/lib/ens/profiles";
import { endedInteraction, sessionMayComplete } from "@/lib/interactions/interactions";
import { consentRequest } from "@/lib/interactions/consent";
import { keyfob } from "@/lib/runtime";
import { upstreamProviders } from "../../../_upstream/auth";
import {
  cancelLogin,
  continueWithSession,
  finishPasskeyLogin,
  loginStillOpen,
  loginWithUpstream,
  loginWithWalletSignature,
  passkeyOptions,
  signOutOfLogin,
} from "../../actions";
import { lastMethod, startedInThisBrowser } from "../../login-cookie";
import { currentLoginSession } from "../../session-cookie";
import { interactionLocale, loadInteraction } from "./locale";

export const dynamic = "force-dynamic";

export async function generateMetadata({ params }: { params: Promise<{ id: string }> }): Promise<Metadata> {
  const t = await getTranslations({ locale: await interactionLocale((await params).id), namespace: "login" });
  return { title: t("metaTitle"), robots: { index: false, follow: false }, referrer: "no-referrer" };
}

export default async function LoginPage({ params }: { params: Promise<{ id: string }> }) {
  const { id } = await params;
  const locale = await interactionLocale(id);
  setRequestLocale(locale);
  const t = await getTranslations({ locale, namespace: "login" });
  const common = await getTranslations({ locale, namespace: "common" });
  const app = keyfob();
  const interaction = await loadInteraction(id);
  const mine = await startedInThisBrowser(id);
  // Logged in already, awaiting consent: the consent page.
  if (!interaction && mine && (await consentRequest(app, id, await currentLoginSession())))
    redirect(`/auth/interaction/${encodeURIComponent(id)}/consent`);
  if (!interaction || !mine) {
    const ended = interaction ? undefined : await endedInteraction(app, id);
    return (
      <EndedLogin
        lang={locale}
        end={ended?.end ?? (interaction ? "elsewhere" : "unknown")}
        // The ways on only for the browser that started it: another's Back leads nowhere of its own.
        ended={mine ? ended : undefined}
        leave={cancelLogin}
      />
    );
  }
  const { clientName } = interaction;
  // "Continue as": the browser's session with Keyfob, unless this request needs a new login.
  const current = await currentLoginSession();
  const lastUsed = await lastMethod();
  const session = current && sessionMayComplete(interaction, current, app.config, app.clock.now()) ? current : undefined;
  // A wallet account's ENS name, as its last wallet login kept it (never looked up on the chain here).
  const ens = session && !session.identity.email ? await storedEnsProfile(app, session.accountId) : undefined;

  const { config } = app;
  const providers = upstreamProviders(config);
  const returnTo = interaction.restartUrl;
  const redirectHost = new URL(interaction.redirectUri).host;
  const sharesEmail = providers.length > 0 && interaction.scope.includes("email");
  const strong = (chunks: ReactNode) => <strong className="font-semibold text-slate-900 dark:text-slate-50">{chunks}</strong>;

  return (
    <AuthShell
      lang={locale}
      brand={{ name: clientName, logoUrl: isHttpsUrl(interaction.clientLogoUrl) ? interaction.clientLogoUrl : null }}
      securedBy={common("securedBy")}
      title={t("title")}
      subtitle={t.rich("subtitle", { client: clientName, strong })}
      footer={
        <form action={cancelLogin}>
          <input type="hidden" name="interaction" value={interaction.id} />
          <SubmitButton className={buttonStyles.quiet} pendingLabel={common("returning")}>
            {t("cancel", { client: clientName })}
          </SubmitButton>
        </form>
      }
    >
      {session && (
        <div className="mb-5">
          <ContinueAsSession
            label={session.identity.email ?? session.accountId}
            ens={hasEnsName(ens) ? ens : undefined}
            connector={session.identity.provider}
            interactionId={interaction.id}
            action={continueWithSession}
            signOut={signOutOfLogin}
          />
        </div>
      )}
      {providers.length > 0 && (
        <>
          <UpstreamButtons
            providers={providers}
            lastUsed={lastUsed}
            interactionId={interaction.id}
            returnTo={returnTo}
            loginHint={interaction.loginHint}
            action={loginWithUpstream}
          />
          <Divider>{common("or")}</Divider>
        </>
      )}
      <PasskeyLogin
        interactionId={interaction.id}
        clientName={clientName}
        restartHref={returnTo}
        getOptions={passkeyOptions}
        finish={finishPasskeyLogin}
        lastUsed={lastUsed === "passkey"}
      />
      <Divider>{common("or")}</Divider>
      <WalletLauncher
        walletConnect={
          config.walletConnectProjectId ? { projectId: config.walletConnectProjectId, issuerUrl: config.issuerUrl } : undefined
        }
        interactionId={interaction.id}
        walletNonce={interaction.walletNonce}
        clientName={clientName}
        issuerUrl={config.issuerUrl}
        chainId={config.chainId}
        serverTime={Date.now()}
        restartHref={returnTo}
        otherOptions={
          providers.length === 2
            ? t("otherTwoOrPasskey")
            : providers.length === 1
              ? t("otherOrPasskey", { provider: providers[0] === "google" ? "Google" : "Apple" })
              : t("otherPasskey")
        }
        lastUsed={lastUsed === "web3"}
        login={loginWithWalletSignature}
        stillOpen={loginStillOpen}
      />
      <p
        className="mt-6 border-t border-slate-200 pt-4 text-center text-xs leading-relaxed text-slate-700 dark:border-slate-700 dark:text-slate-300"
        data-testid="disclosure"
      >
        {t.rich(interaction.device ? "disclosureDevice" : sharesEmail ? "disclosureEmail" : "disclosure", {
          host: redirectHost,
          client: clientName,
          strong: (chunks) => strong(chunks),
        })}
      </p>
    </AuthShell>
  );
}
