"use server";
/**
 * Server actions of the hosted login page. Each one parses its input, calls lib/, and either
 * redirects (a code or an error for the client, or the upstream provider) or returns a message
 * the page shows.
 */
import { redirect } from "next/navigation";
import { completeAuthorization, interactionRedirect, loginWithWallet, type Completion } from "@/lib/actions/authorize";
import { toOAuthError } from "@/lib/http/respond";
import { log } from "@/lib/log";
import { limitProtocolRequest } from "@/lib/rate-limit";
import { keyfob } from "@/lib/runtime";
import { signIn, upstreamProviders } from "../_upstream/auth";
import { forgetLogin, rememberLogin, safeReturnTo, startedInThisBrowser } from "./login-cookie";
import { currentLoginSession, loginClient, setSessionCookie } from "./session-cookie";

/** What a failed action tells the page: a sentence for the user, and whether starting over helps. */
export type ActionResult = { error: string; restart?: boolean };

const field = (form: FormData, name: string) => {
  const value = form.get(name);
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
  redirect(location);
}

/** "Cancel": back to the application with error=access_denied (and its state and iss). */
export async function cancelLogin(form: FormData): Promise<void> {
  const interactionId = field(form, "interaction");
  if (!(await startedInThisBrowser(interactionId))) redirect("/auth/error?reason=browser");
  const { location } = await settle("cancel", async () => ({ location: await interactionRedirect(keyfob(), interactionId, "access_denied", "the user cancelled the login") }));
  await forgetLogin();
  redirect(location);
}

/** A signed EIP-4361 message from the wallet: on success, 303 to the application with a code. */
export async function loginWithWalletSignature(interactionId: string, message: string, signature: string): Promise<ActionResult> {
  if (typeof interactionId !== "string" || typeof message !== "string" || typeof signature !== "string" || message.length > 4096 || message.includes("\0")) {
    return { error: "The wallet's answer could not be read. Please try again." };
  }
  if (!(await startedInThisBrowser(interactionId))) return { error: "This sign-in was started in another browser. Start again from the application.", restart: true };
  let completion: Completion;
  try {
    const k = keyfob();
    const client = await loginClient();
    await limitProtocolRequest(k, "authorize_wallet", { ip: client.ip });
    completion = await loginWithWallet(k, interactionId, message, signature, client);
  } catch (caught) {
    const error = toOAuthError(caught);
    logRefusal("wallet_login", error.code, caught);
    if (error.status === 429) return { error: `Too many sign-in attempts from this network. Wait ${error.retryAfter ?? 60} seconds, then try again.` };
    if (error.code === "temporarily_unavailable" || error.code === "server_error") {
      return { error: "Keyfob could not check your signature just now. Please try again in a moment." };
    }
    const expired = /expired|already completed/.test(error.message);
    return { error: sentence(error.message), restart: expired };
  }
  await setSessionCookie(completion.newSession);
  redirect(completion.location);
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
  if (code === "server_error") log.error("login action failed", { ...fields, cause: caught instanceof Error ? caught.name : typeof caught });
  else log.info("login action refused", fields);
}

const sentence = (text: string) => {
  const trimmed = text.trim();
  const capital = trimmed.charAt(0).toUpperCase() + trimmed.slice(1);
  return /[.!?]$/.test(capital) ? capital : `${capital}.`;
};
