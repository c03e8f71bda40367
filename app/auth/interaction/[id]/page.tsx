/**
 * /auth/interaction/[id]: the hosted login page of an authorization request that /auth accepted.
 * It offers Google, Apple (when configured) and a browser wallet; the interaction must be one this
 * browser started (its cookie), unexpired and unfinished.
 */
import type { Metadata } from "next";
import { SubmitButton } from "@/components/login/submit-button";
import { buttonStyles, AuthShell, Divider, Notice } from "@/components/login/ui";
import { ContinueAsSession, UpstreamButtons } from "@/components/login/upstream-buttons";
import { WalletLogin } from "@/components/login/wallet-login";
import { Web3Providers } from "@/components/providers";
import { pendingInteraction, sessionMayComplete } from "@/lib/actions/authorize";
import { keyfob } from "@/lib/runtime";
import { upstreamProviders } from "../../../_upstream/auth";
import { cancelLogin, continueWithSession, loginWithUpstream, loginWithWalletSignature } from "../../actions";
import { startedInThisBrowser } from "../../login-cookie";
import { currentLoginSession } from "../../session-cookie";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Sign in · Keyfob", robots: { index: false, follow: false }, referrer: "no-referrer" };

export default async function LoginPage({ params }: { params: Promise<{ id: string }> }) {
  const { id } = await params;
  const app = keyfob();
  const interaction = await pendingInteraction(app, id);
  if (!interaction || !(await startedInThisBrowser(interaction.id))) {
    return (
      <AuthShell title="This sign-in has ended">
        <Notice tone="error" title={interaction ? "This sign-in was started elsewhere" : "This sign-in has expired"}>
          {interaction
            ? "The sign-in you opened was not started in this browser, so Keyfob stopped it. Start again from the application."
            : "It took too long, or the sign-in was already used. Start again from the application."}
        </Notice>
      </AuthShell>
    );
  }
  const start = { interactionId: interaction.id, clientName: interaction.clientName, walletNonce: interaction.walletNonce, scope: interaction.scope, loginHint: interaction.loginHint };
  // "Continue as": the browser's session with Keyfob, unless this request needs a new login.
  const current = await currentLoginSession();
  const session = current && sessionMayComplete(interaction, current) ? current : undefined;

  const { config } = app;
  const providers = upstreamProviders(config);
  const returnTo = interaction.restartUrl;
  const redirectHost = new URL(interaction.redirectUri).host;

  return (
    <AuthShell
      title="Sign in"
      subtitle={
        <>
          to continue to <strong className="font-semibold text-slate-900">{start.clientName}</strong>
        </>
      }
      footer={
        <>
          <form action={cancelLogin}>
            <input type="hidden" name="interaction" value={start.interactionId} />
            <SubmitButton className={buttonStyles.quiet} pendingLabel="Returning…">
              Cancel and return to {start.clientName}
            </SubmitButton>
          </form>
          <p className="px-2 text-xs leading-relaxed text-slate-500">
            After you sign in, Keyfob sends you back to <span className="font-medium text-slate-700">{redirectHost}</span> and
            shares your account address{providers.length > 0 && start.scope.includes("email") ? " and, with Google or Apple, your email address" : ""} with{" "}
            {start.clientName}.
          </p>
        </>
      }
    >
      {session && (
        <div className="mb-5">
          <ContinueAsSession
            label={session.identity.email ?? `${session.accountId.slice(0, 6)}…${session.accountId.slice(-4)}`}
            connector={session.identity.provider}
            interactionId={start.interactionId}
            action={continueWithSession}
          />
        </div>
      )}
      {providers.length > 0 && (
        <>
          <UpstreamButtons
            providers={providers}
            interactionId={start.interactionId}
            returnTo={returnTo}
            loginHint={start.loginHint}
            action={loginWithUpstream}
          />
          <Divider>or</Divider>
        </>
      )}
      <Web3Providers chainId={config.chainId}>
        <WalletLogin
          interactionId={start.interactionId}
          walletNonce={start.walletNonce}
          clientName={start.clientName}
          issuerUrl={config.issuerUrl}
          chainId={config.chainId}
          serverTime={Date.now()}
          restartHref={returnTo}
          otherOptions={providers.map((id) => (id === "google" ? "Google" : "Apple")).join(" or ") || undefined}
          login={loginWithWalletSignature}
        />
      </Web3Providers>
    </AuthShell>
  );
}
