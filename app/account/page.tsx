/**
 * /account: a person signed in with Google or Apple sees their Keyfob account (its address) and can
 * link a wallet to it, so the wallet logs into the same account afterwards.
 */
import type { Metadata } from "next";
import { LinkWallet } from "@/components/account/link-wallet";
import { SubmitButton } from "@/components/login/submit-button";
import { UpstreamButtons } from "@/components/login/upstream-buttons";
import { AuthShell, buttonStyles, Notice } from "@/components/login/ui";
import { Web3Providers } from "@/components/providers";
import { resolveAccount } from "@/lib/accounts/accounts";
import { keyfob } from "@/lib/runtime";
import { accountLinkNonce } from "@/lib/siwe/login";
import { sessionIdentity, upstreamProviders } from "../_upstream/auth";
import { accountSignIn, accountSignOut, linkWalletToAccount } from "./actions";

export const dynamic = "force-dynamic";
export const metadata: Metadata = { title: "Your account · Keyfob", robots: { index: false, follow: false } };

const LABELS = { google: "Google", apple: "Apple", web3: "a wallet" } as const;

export default async function AccountPage() {
  const app = keyfob();
  const identity = await sessionIdentity();
  const providers = upstreamProviders(app.config);

  if (!identity) {
    return (
      <AuthShell title="Your Keyfob account" subtitle="Sign in with Google or Apple to manage your account.">
        {providers.length === 0 ? (
          <Notice tone="info" title="Nothing to manage here">
            This Keyfob has no Google or Apple sign-in configured. Wallets sign in directly and need no linking.
          </Notice>
        ) : (
          <UpstreamButtons providers={providers} action={accountSignIn} />
        )}
      </AuthShell>
    );
  }

  const accountId = await resolveAccount(app, identity);
  return (
    <AuthShell
      title="Your Keyfob account"
      subtitle={<>Signed in with {LABELS[identity.provider]}{identity.email ? <> as <strong className="font-semibold text-slate-900">{identity.email}</strong></> : null}</>}
      footer={
        <form action={accountSignOut}>
          <SubmitButton className={buttonStyles.quiet} pendingLabel="Signing out…">
            Sign out
          </SubmitButton>
        </form>
      }
    >
      <dl className="rounded-xl bg-slate-50 p-4 ring-1 ring-slate-200">
        <dt className="text-xs font-medium uppercase tracking-wider text-slate-500">Account address</dt>
        <dd className="mt-1 break-all font-mono text-sm text-slate-900" data-testid="account-address">
          {accountId}
        </dd>
      </dl>
      <h2 className="mt-6 text-sm font-semibold text-slate-900">Link a wallet</h2>
      <p className="mb-4 mt-1 text-sm leading-relaxed text-slate-600">
        A linked wallet signs in to this same account, with the same address, in every application.
      </p>
      <Web3Providers chainId={app.config.chainId}>
        <LinkWallet
          accountId={accountId}
          nonce={accountLinkNonce(app, accountId)}
          issuerUrl={app.config.issuerUrl}
          chainId={app.config.chainId}
          serverTime={Date.now()}
          link={linkWalletToAccount}
        />
      </Web3Providers>
    </AuthShell>
  );
}
