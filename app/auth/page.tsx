/**
 * GET /auth: the authorization endpoint and hosted login page of the code flow.
 * The request is checked by lib/ (startAuthorization). An untrusted client_id or redirect_uri gets
 * an error page and never a redirect; other errors, and prompt=none, go back to the application;
 * otherwise the page offers Google, Apple (when configured) and a browser wallet.
 */
import type { Metadata } from "next";
import { redirect } from "next/navigation";
import { SubmitButton } from "@/components/login/submit-button";
import { buttonStyles, AuthShell, Divider, Notice } from "@/components/login/ui";
import { ContinueAsSession, UpstreamButtons } from "@/components/login/upstream-buttons";
import { WalletLogin } from "@/components/login/wallet-login";
import { Web3Providers } from "@/components/providers";
import { startAuthorization } from "@/lib/actions/authorize";
import { keyfob } from "@/lib/runtime";
import { sessionIdentity, upstreamProviders } from "../_upstream/auth";
import { cancelLogin, continueWithSession, loginWithUpstream, loginWithWalletSignature } from "./actions";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Sign in · Keyfob", robots: { index: false, follow: false }, referrer: "no-referrer" };

type SearchParams = Record<string, string | string[] | undefined>;

export default async function AuthorizePage({ searchParams }: { searchParams: Promise<SearchParams> }) {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(await searchParams)) {
    for (const item of Array.isArray(value) ? value : value === undefined ? [] : [value]) query.append(name, item);
  }
  const app = keyfob();
  const session = await sessionIdentity();
  const start = await startAuthorization(app, query, session);

  if (start.kind === "redirect") redirect(start.location);
  if (start.kind === "error") {
    return (
      <AuthShell title="This sign-in link doesn't work">
        <Notice tone="error" title="The application's request was refused">
          {start.description}
        </Notice>
        <p className="mt-5 text-sm leading-relaxed text-slate-600">
          For your safety you have not been sent anywhere. Go back to the application and try again; if this keeps happening,
          tell its developers that its Keyfob settings (client ID or redirect URI) need attention.
        </p>
      </AuthShell>
    );
  }

  const { config } = app;
  const providers = upstreamProviders(config);
  const returnTo = `/auth?${query}`;
  const redirectHost = new URL(query.get("redirect_uri")!).host;
  const reauthenticate = (query.get("prompt") ?? "").split(" ").includes("login");
  const offerSession = session && !reauthenticate && providers.includes(session.provider as "google");

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
      {offerSession && (
        <div className="mb-5">
          <ContinueAsSession
            label={session.email ?? "your account"}
            provider={session.provider as "google" | "apple"}
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
