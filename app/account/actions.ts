"use server";
/**
 * Server actions of /account: sign in or out, link a wallet to the signed-in account, and add a
 * passkey to it. Failures answer a key of the page's message catalog (`loginErrors`).
 */
import { walletRefusal, type LoginErrorKey } from "@/components/login/login-result";
import { translator } from "@/i18n/messages";
import { requestLocale } from "@/i18n/server";
import { toOAuthError } from "@/lib/http/respond";
import { log } from "@/lib/log";
import { addPasskey, addPasskeyOptions, PasskeyError, type PasskeyCreationOptions } from "@/lib/passkeys/passkeys";
import { limitProtocolRequest } from "@/lib/rate-limit";
import { keyfob } from "@/lib/runtime";
import { endSession } from "@/lib/sessions/login-session";
import { verifyAccountLink } from "@/lib/siwe/login";
import { redirect } from "next/navigation";
import { signIn, upstreamProviders } from "../_upstream/auth";
import { clearSessionCookie, loginClient } from "../auth/session-cookie";
import { signedInAccount } from "./identity";

type Failure = { error: LoginErrorKey; seconds?: number; restart?: boolean };
export type LinkResult = Failure | { linked: string };
export type AddPasskeyStart = Failure | { options: PasskeyCreationOptions };
export type AddPasskeyResult = Failure | { added: string };

export async function accountSignIn(form: FormData): Promise<void> {
  const provider = form instanceof FormData ? form.get("provider") : null; // a hand-made request may send anything
  if (typeof provider !== "string" || !upstreamProviders(keyfob().config).includes(provider as "google")) return;
  await signIn(provider, { redirectTo: "/account/callback" });
}

/** Signs out of this browser: the login session with Keyfob. */
export async function accountSignOut(): Promise<void> {
  const k = keyfob();
  const token = await clearSessionCookie();
  if (await endSession(k, token)) k.audit.record({ action: "session.ended", outcome: "success", detail: "signed out at /account" });
  redirect("/account");
}

/** Links the wallet that signed `message` (with this account's link nonce) to the signed-in account. */
export async function linkWalletToAccount(message: string, signature: string): Promise<LinkResult> {
  const account = await signedInAccount();
  if (!account) return { error: "signedOut", restart: true };
  if (typeof message !== "string" || typeof signature !== "string" || message.length > 4096) return { error: "unreadable" };
  try {
    const wallet = await verifyAccountLink(keyfob(), account.accountId, message, signature);
    log.info("wallet linked", { endpoint: "account", provider: account.provider });
    return { linked: wallet };
  } catch (caught) {
    const error = toOAuthError(caught);
    log.info("wallet link refused", { endpoint: "account", error: error.code });
    if (error.status >= 500) return { error: "unavailable" };
    if (error.code === "access_denied") return { error: "blocked" };
    return walletRefusal(error.why, "wrongMessage");
  }
}

/** Options for a new passkey of the signed-in account (its user handle; its passkeys excluded). */
export async function startAddingPasskey(): Promise<AddPasskeyStart> {
  const account = await signedInAccount();
  if (!account) return { error: "signedOut", restart: true };
  try {
    const k = keyfob();
    await limitProtocolRequest(k, "account_passkey", { ip: (await loginClient()).ip });
    const locale = await requestLocale();
    const date = new Intl.DateTimeFormat(locale, { dateStyle: "medium", timeZone: "UTC" }).format(new Date());
    const name = account.email ?? translator(locale, "passkey")("accountName", { date });
    return { options: await addPasskeyOptions(k, account.accountId, { userName: name, displayName: name }) };
  } catch (caught) {
    return failure("passkey options", caught);
  }
}

/** The new passkey's answer: checked against this account's challenge, then stored. */
export async function finishAddingPasskey(answer: unknown): Promise<AddPasskeyResult> {
  const account = await signedInAccount();
  if (!account) return { error: "signedOut", restart: true };
  try {
    const k = keyfob();
    await limitProtocolRequest(k, "account_passkey", { ip: (await loginClient()).ip });
    const { id } = await addPasskey(k, account.accountId, answer);
    k.audit.record({
      action: "account.passkey_added",
      outcome: "success",
      accountId: account.accountId,
      detail: `signed in with ${account.provider}`,
    });
    return { added: id };
  } catch (caught) {
    return failure("passkey", caught);
  }
}

function failure(what: string, caught: unknown): Failure {
  const error = toOAuthError(caught);
  log.info(`${what} refused`, { endpoint: "account", error: error.code });
  if (error.status === 429) return { error: "tooMany", seconds: error.retryAfter ?? 60 };
  if (error.status >= 500) return { error: "unavailable" };
  if (caught instanceof PasskeyError) {
    return {
      error: (
        {
          malformed: "malformed",
          expired: "passkeyExpired",
          unknown_passkey: "unknownPasskey",
          not_verified: "notVerified",
          already_registered: "alreadyRegistered",
          unavailable_login: "expired",
        } as const
      )[caught.reason],
    };
  }
  return { error: "refused" };
}
