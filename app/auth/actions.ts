"use server";
/**
 * Server actions of the hosted login page. Each one parses its input, calls lib/, and either
 * redirects (a code or an error for the client, or the upstream provider) or returns a message
 * the page shows.
 */
import { redirect } from "next/navigation";
import { walletRefusal, type LoginResult } from "@/components/login/login-result";
import type { PasskeyMode, PasskeyOptionsResult } from "@/components/login/passkey-login";
import { translator } from "@/i18n/messages";
import { requestLocale } from "@/i18n/server";
import { declineConsent, giveConsent } from "@/lib/interactions/consent";
import { completeAuthorization, leaveInteraction, pendingInteraction, type Completion } from "@/lib/interactions/interactions";
import { loginWithWallet } from "@/lib/siwe/login";
import { toOAuthError } from "@/lib/http/respond";
import { log } from "@/lib/log";
import { loginWithPasskey, signUpWithPasskey } from "@/lib/passkeys/login";
import { endSession } from "@/lib/sessions/login-session";
import { loginOptions, PasskeyError, registrationOptions, type PasskeyFailure } from "@/lib/passkeys/passkeys";
import type { OAuthError } from "@/lib/oauth/errors";
import { limitProtocolRequest } from "@/lib/rate-limit";
import { keyfob } from "@/lib/runtime";
import { signIn, upstreamProviders } from "../_upstream/auth";
import { forgetLogin, forgetMethod, rememberLogin, rememberMethod, safeReturnTo, startedInThisBrowser } from "./login-cookie";
import { clearSessionCookie, currentLoginSession, loginClient, setSessionCookie } from "./session-cookie";

/** A form field; "" when absent, or when a hand-made request sent no form at all (a TypeError, a 500, otherwise). */
const field = (form: FormData, name: string) => {
  const value = form instanceof FormData ? form.get(name) : null;
  return typeof value === "string" ? value : "";
};

/** "Continue with Google/Apple": remember the interaction in this browser, then leave for the provider. */
export async function loginWithUpstream(form: FormData): Promise<void> {
  const provider = field(form, "provider");
  const interactionId = field(form, "interaction");
  if (!interactionId || !upstreamProviders(keyfob().config).includes(provider as "google")) {
    redirect("/auth/error?reason=unavailable");
  }
  if (!(await startedInThisBrowser(interactionId))) redirect("/auth/error?reason=browser");
  // A login that is over: its page says so (and offers the ways on) before the trip to the provider.
  if (!(await pendingInteraction(keyfob(), interactionId))) redirect(`/auth/interaction/${encodeURIComponent(interactionId)}`);
  await rememberLogin({ interactionId, returnTo: safeReturnTo(field(form, "returnTo")) });
  const loginHint = field(form, "loginHint");
  await signIn(
    provider,
    { redirectTo: `/auth/callback?interaction=${encodeURIComponent(interactionId)}` },
    provider === "google" && loginHint ? { login_hint: loginHint } : undefined,
  );
}

/** "Continue as ...": the Google/Apple session this browser already has completes the login. */
export async function continueWithSession(form: FormData): Promise<void> {
  const session = await currentLoginSession();
  if (!session) redirect("/auth/error?reason=session");
  const interactionId = field(form, "interaction");
  if (!(await startedInThisBrowser(interactionId))) redirect("/auth/error?reason=browser");
  const { location } = await settle("continue_session", () => completeAuthorization(keyfob(), interactionId, { session }));
  await rememberMethod(session.identity.provider);
  redirect(location);
}

/** "Not you?": ends this browser's Keyfob session, then shows the same login's choices again. */
export async function signOutOfLogin(form: FormData): Promise<void> {
  const interactionId = field(form, "interaction");
  if (!(await startedInThisBrowser(interactionId))) redirect("/auth/error?reason=browser");
  const k = keyfob();
  const session = await currentLoginSession();
  await endSession(k, await clearSessionCookie());
  await forgetMethod();
  if (session) k.audit.record({ action: "session.ended", outcome: "success", accountId: session.accountId, detail: "not_you" });
  redirect(`/auth/interaction/${encodeURIComponent(interactionId)}`);
}

/**
 * "Cancel", and "Return to the application" once the login is over (cancelled or expired): back to
 * the application with error=access_denied (and its state and iss).
 */
export async function cancelLogin(form: FormData): Promise<void> {
  const interactionId = field(form, "interaction");
  if (!(await startedInThisBrowser(interactionId))) redirect("/auth/error?reason=browser");
  const { location } = await settle("cancel", async () => ({ location: await leaveInteraction(keyfob(), interactionId) }));
  await forgetLogin();
  redirect(location);
}

/** "Allow" on the consent page: the grant is recorded and the code goes to the application. */
export async function allowConsent(form: FormData): Promise<void> {
  await decideConsent(form, giveConsent);
}

/** "Deny" on the consent page: back to the application with error=access_denied. */
export async function denyConsent(form: FormData): Promise<void> {
  await decideConsent(form, declineConsent);
}

/** A consent decision, by the browser that started the login, in the login session that logged in. */
async function decideConsent(form: FormData, decide: typeof giveConsent): Promise<void> {
  const interactionId = field(form, "interaction");
  if (!(await startedInThisBrowser(interactionId))) redirect("/auth/error?reason=browser");
  const session = await currentLoginSession();
  if (!session) redirect("/auth/error?reason=session");
  const { location } = await settle("consent", async () => ({ location: await decide(keyfob(), interactionId, session) }));
  redirect(location);
}

/** Whether the login is still open: asked before the wallet is asked to sign, so an expired login says so first. */
export async function loginStillOpen(interactionId: string): Promise<LoginResult> {
  if (typeof interactionId !== "string") return { error: "unreadable" };
  if (!(await startedInThisBrowser(interactionId))) return { error: "elsewhere", restart: true };
  try {
    return (await pendingInteraction(keyfob(), interactionId)) ? undefined : { error: "expired", restart: true };
  } catch (caught) {
    logRefusal("login_open", "server_error", caught);
    return { error: "unavailable" };
  }
}

/** A signed EIP-4361 message from the wallet: on success, 303 to the application with a code. */
export async function loginWithWalletSignature(interactionId: string, message: string, signature: string): Promise<LoginResult> {
  if (
    typeof interactionId !== "string" ||
    typeof message !== "string" ||
    typeof signature !== "string" ||
    message.length > 4096 ||
    message.includes("\0")
  ) {
    return { error: "unreadable" };
  }
  if (!(await startedInThisBrowser(interactionId))) return { error: "elsewhere", restart: true };
  let completion: Completion;
  try {
    const k = keyfob();
    const client = await loginClient();
    await limitProtocolRequest(k, "authorize_wallet", { ip: client.ip });
    completion = await loginWithWallet(k, interactionId, message, signature, client);
  } catch (caught) {
    const error = toOAuthError(caught);
    logRefusal("wallet_login", error.code, caught);
    return refusal(error) ?? walletRefusal(error.why, "refused");
  }
  await setSessionCookie(completion.newSession);
  await rememberMethod("web3");
  redirect(completion.location);
}

/**
 * Passkey options for a login page: "login" (any of Keyfob's passkeys) or "register" (a new
 * passkey, for a new account). Single use, bound to this login; rate-limited like wallet logins.
 */
export async function passkeyOptions(interactionId: string, mode: PasskeyMode): Promise<PasskeyOptionsResult> {
  if (typeof interactionId !== "string" || (mode !== "login" && mode !== "register")) return { error: "unreadable" };
  if (!(await startedInThisBrowser(interactionId))) return { error: "elsewhere", restart: true };
  try {
    const k = keyfob();
    await limitProtocolRequest(k, "authorize_passkey", { ip: (await loginClient()).ip });
    if (mode === "login") return { mode, options: await loginOptions(k, interactionId) };
    // What the person's passkey manager lists: there is no email or user name to show.
    const locale = await requestLocale((await pendingInteraction(k, interactionId))?.uiLocales);
    const date = new Intl.DateTimeFormat(locale, { dateStyle: "medium", timeZone: "UTC" }).format(new Date());
    const name = translator(locale, "passkey")("accountName", { date });
    return { mode, options: await registrationOptions(k, interactionId, { userName: name, displayName: name }) };
  } catch (caught) {
    const error = toOAuthError(caught);
    logRefusal("passkey_options", error.code, caught);
    return refusal(error) ?? passkeyRefusal(caught);
  }
}

/** A passkey's answer on a login page (a returning user's, or a new user's new passkey): on success, 303 to the application. */
export async function finishPasskeyLogin(interactionId: string, mode: PasskeyMode, answer: unknown): Promise<LoginResult> {
  if (typeof interactionId !== "string" || (mode !== "login" && mode !== "register")) return { error: "unreadable" };
  if (!(await startedInThisBrowser(interactionId))) return { error: "elsewhere", restart: true };
  let completion: Completion;
  try {
    const k = keyfob();
    const client = await loginClient();
    await limitProtocolRequest(k, "authorize_passkey", { ip: client.ip });
    completion = await (mode === "login" ? loginWithPasskey : signUpWithPasskey)(k, interactionId, answer, client);
  } catch (caught) {
    const error = toOAuthError(caught);
    logRefusal(mode === "login" ? "passkey_login" : "passkey_signup", error.code, caught);
    return refusal(error) ?? passkeyRefusal(caught);
  }
  await setSessionCookie(completion.newSession);
  await rememberMethod("passkey");
  redirect(completion.location);
}

/** Refusals every login action words the same way: rate limits, outages, a blocked account, a login that is over. */
function refusal(error: OAuthError): NonNullable<LoginResult> | undefined {
  if (error.status === 429) return { error: "tooMany", seconds: error.retryAfter ?? 60 };
  if (error.code === "temporarily_unavailable" || error.code === "server_error") return { error: "unavailable" };
  if (error.code === "access_denied") return { error: "blocked" };
  if (error.why?.code === "interaction_expired") return { error: "expired", restart: true };
  return undefined;
}

const PASSKEY_REFUSALS: Record<PasskeyFailure, NonNullable<LoginResult>> = {
  malformed: { error: "malformed" },
  expired: { error: "passkeyExpired" },
  unknown_passkey: { error: "unknownPasskey" },
  not_verified: { error: "notVerified" },
  already_registered: { error: "alreadyRegistered" },
  unavailable_login: { error: "expired", restart: true },
};

function passkeyRefusal(caught: unknown): NonNullable<LoginResult> {
  return caught instanceof PasskeyError ? PASSKEY_REFUSALS[caught.reason] : { error: "refused" };
}

/** Runs an action whose failure leaves nothing to do on the page: failures go to the error page. */
async function settle(action: string, run: () => Promise<Completion>): Promise<Completion> {
  try {
    return await run();
  } catch (caught) {
    const error = toOAuthError(caught);
    logRefusal(action, error.code, caught);
    redirect(`/auth/error?reason=${error.status >= 500 ? "unavailable" : error.code === "access_denied" ? "blocked" : "expired"}`);
  }
}

function logRefusal(action: string, code: string, caught: unknown) {
  const fields = { endpoint: "login", action, error: code };
  if (code === "server_error")
    log.error("login action failed", { ...fields, cause: caught instanceof Error ? caught.name : typeof caught });
  else log.info("login action refused", fields);
}
