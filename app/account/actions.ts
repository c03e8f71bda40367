"use server";
/** Server actions of /account: sign in or out upstream, and link a wallet to the signed-in account. */
import { resolveAccount } from "@/lib/accounts/accounts";
import { toOAuthError } from "@/lib/http/respond";
import { log } from "@/lib/log";
import { keyfob } from "@/lib/runtime";
import { verifyAccountLink } from "@/lib/siwe/login";
import { sessionIdentity, signIn, signOut, upstreamProviders } from "../_upstream/auth";

export type LinkResult = { error: string } | { linked: string };

export async function accountSignIn(form: FormData): Promise<void> {
  const provider = form.get("provider");
  if (typeof provider !== "string" || !upstreamProviders(keyfob().config).includes(provider as "google")) return;
  await signIn(provider, { redirectTo: "/account" });
}

export async function accountSignOut(): Promise<void> {
  await signOut({ redirectTo: "/account" });
}

/** Links the wallet that signed `message` (with this account's link nonce) to the signed-in account. */
export async function linkWalletToAccount(message: string, signature: string): Promise<LinkResult> {
  const identity = await sessionIdentity();
  if (!identity) return { error: "You are no longer signed in. Reload the page and sign in again." };
  if (typeof message !== "string" || typeof signature !== "string" || message.length > 4096) {
    return { error: "The wallet's answer could not be read. Please try again." };
  }
  const app = keyfob();
  try {
    const accountId = await resolveAccount(app, identity);
    const wallet = await verifyAccountLink(app, accountId, message, signature);
    log.info("wallet linked", { endpoint: "account", provider: identity.provider });
    return { linked: wallet };
  } catch (caught) {
    const error = toOAuthError(caught);
    log.info("wallet link refused", { endpoint: "account", error: error.code });
    if (error.status >= 500) return { error: "Keyfob could not link the wallet just now. Please try again in a moment." };
    return { error: error.message.charAt(0).toUpperCase() + error.message.slice(1) + "." };
  }
}
