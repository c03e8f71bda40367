"use server";
/**
 * Server actions of /account: sign in or out, link a wallet to the signed-in account, and add a
 * passkey to it (failures answer a key of the page's message catalog, `loginErrors`); unlink a way
 * in, name or remove a passkey, sign sessions out and delete the account (plain forms: each goes
 * back to /account with what happened, `done`, or the refusal's reason code, `refused`). Each
 * passes the session's login to lib/, which refuses the changes it may not make.
 */
import { sessionRefusal, walletRefusal, type LoginErrorKey } from "@/components/login/login-result";
import { translator } from "@/i18n/messages";
import { requestLocale } from "@/i18n/server";
import {
  deleteOwnAccount,
  removeWayIn,
  renamePasskey as namePasskey,
  revokeApplication,
  signOutSessions,
  type WayIn,
} from "@/lib/accounts/self-service";
import { toOAuthError } from "@/lib/http/respond";
import { log } from "@/lib/log";
import { invalidRequest } from "@/lib/oauth/errors";
import { addPasskey, addPasskeyOptions, PasskeyError, type PasskeyCreationOptions } from "@/lib/passkeys/passkeys";
import { limitProtocolRequest } from "@/lib/rate-limit";
import { keyfob } from "@/lib/runtime";
import { endSession } from "@/lib/sessions/login-session";
import { verifyAccountLink } from "@/lib/siwe/login";
import { redirect } from "next/navigation";
import { signIn, upstreamProviders } from "../_upstream/auth";
import { clearSessionCookie, loginClient } from "../auth/session-cookie";
import { type SignedIn, signedInAccount } from "./identity";

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
    const k = keyfob();
    const { ip } = await loginClient();
    const wallet = await verifyAccountLink(k, account.accountId, message, signature, { login: account.login, ip });
    log.info("wallet linked", { endpoint: "account", provider: account.provider });
    k.audit.record({
      action: "account.wallet_linked",
      outcome: "success",
      accountId: account.accountId,
      ip,
      detail: `web3:${wallet}; signed in with ${account.provider}`,
    });
    return { linked: wallet };
  } catch (caught) {
    const error = toOAuthError(caught);
    log.info("wallet link refused", { endpoint: "account", error: error.code });
    if (error.status >= 500) return { error: "unavailable" };
    if (error.code === "access_denied") return { error: "blocked" };
    return sessionRefusal(error.why) ?? walletRefusal(error.why, "wrongMessage");
  }
}

/** Options for a new passkey of the signed-in account (its user handle; its passkeys excluded). */
export async function startAddingPasskey(): Promise<AddPasskeyStart> {
  const account = await signedInAccount();
  if (!account) return { error: "signedOut", restart: true };
  try {
    const k = keyfob();
    const { ip } = await loginClient();
    await limitProtocolRequest(k, "account_passkey", { ip });
    const locale = await requestLocale();
    const date = new Intl.DateTimeFormat(locale, { dateStyle: "medium", timeZone: "UTC" }).format(new Date());
    const name = account.email ?? translator(locale, "passkey")("accountName", { date });
    return { options: await addPasskeyOptions(k, account.accountId, { userName: name, displayName: name }, { login: account.login, ip }) };
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
    const { ip } = await loginClient();
    await limitProtocolRequest(k, "account_passkey", { ip });
    const { id } = await addPasskey(k, account.accountId, answer, { login: account.login, ip });
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
  const refusedSession = sessionRefusal(error.why);
  if (refusedSession) return refusedSession;
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

/** What a form on /account did, shown on the page it returns to. */
export type AccountDone = "unlinked" | "renamed" | "removed" | "signedOut" | "signedOutEverywhere" | "revoked" | "deleted";

const field = (form: FormData, name: string) => {
  const value = form instanceof FormData ? form.get(name) : null; // a hand-made request may send anything
  return typeof value === "string" ? value.slice(0, 1024) : "";
};

/**
 * Runs a change for the signed-in account, then goes back to /account: with what was done, or
 * with the reason code of a refusal (the page words it). Signed out, it just goes back.
 */
async function change(done: AccountDone, work: (account: SignedIn, ip?: string) => Promise<unknown>) {
  const account = await signedInAccount();
  if (!account) redirect("/account");
  let outcome: string;
  try {
    await work(account, (await loginClient()).ip);
    outcome = `done=${done}`;
  } catch (caught) {
    const error = toOAuthError(caught);
    log.info("account change refused", { endpoint: "account", error: error.code });
    outcome = error.why ? `refused=${error.why.code}` : `refused=${error.status >= 500 ? "unavailable" : "refused"}`;
  }
  redirect(`/account?${outcome}`);
}

/** Unlinks a wallet, Google or Apple identity (`provider`, `subject`), or removes a passkey (`passkey`). */
export async function unlinkWayIn(form: FormData): Promise<void> {
  const passkey = field(form, "passkey");
  const wayIn: WayIn = passkey ? { passkey } : { identity: { provider: field(form, "provider"), subject: field(form, "subject") } };
  await change(passkey ? "removed" : "unlinked", ({ accountId, login }, ip) => removeWayIn(keyfob(), accountId, wayIn, { login, ip }));
}

export async function renamePasskey(form: FormData): Promise<void> {
  await change("renamed", ({ accountId }, ip) => namePasskey(keyfob(), accountId, field(form, "passkey"), field(form, "name"), { ip }));
}

/** Signs one session out (`session`), or every one; this browser's too when it is among them. */
export async function signOutSession(form: FormData): Promise<void> {
  const session = field(form, "session") || undefined;
  await change(session ? "signedOut" : "signedOutEverywhere", async ({ accountId, sessionId }, ip) => {
    await signOutSessions(keyfob(), accountId, session, { ip });
    if (!session || session === sessionId) await clearSessionCookie();
  });
}

/** Revokes an application's access (`client`): its grant and its refresh tokens for this account. */
export async function revokeApplicationAccess(form: FormData): Promise<void> {
  await change("revoked", ({ accountId }, ip) => revokeApplication(keyfob(), accountId, field(form, "client"), { ip }));
}

/** Deletes the signed-in account, once the person has confirmed it (`confirm`). */
export async function deleteAccount(form: FormData): Promise<void> {
  await change("deleted", async ({ accountId, login }, ip) => {
    if (field(form, "confirm") !== "delete") throw invalidRequest({ code: "delete_unconfirmed" });
    await deleteOwnAccount(keyfob(), accountId, { login, ip });
    await clearSessionCookie();
  });
}
