/**
 * Binds logins to the browser that started them. /auth sets a cookie scoped to the interaction's
 * page (so several logins in several tabs do not overwrite each other), and the page's actions
 * (wallet, "Continue as", Cancel) accept only an interaction this browser started: a link to
 * someone else's login page cannot log its reader into that login.
 *
 * A Google/Apple login is bound the same way: the login page's server action
 * stores the interaction (and the /auth URL to retry from) in an httpOnly cookie before leaving
 * for the upstream provider, and /auth/callback completes only the interaction this browser
 * started. A link to /auth/callback?interaction=... sent to someone else's browser therefore
 * cannot turn their upstream session into a code.
 */
import { cookies } from "next/headers";
import type { Connector } from "@/lib/accounts/accounts";
import { keyfob } from "@/lib/runtime";

const NAME = "keyfob.login";
const INTERACTION = "keyfob.interaction";
const MAX_AGE = 15 * 60;

export type RememberedLogin = { interactionId: string; returnTo?: string };

/** Only a same-origin /auth?... URL may be offered as "try again". */
export function safeReturnTo(value: unknown): string | undefined {
  return typeof value === "string" && value.startsWith("/auth?") && !value.includes("\\") ? value : undefined;
}

export async function rememberLogin(login: RememberedLogin): Promise<void> {
  const jar = await cookies();
  jar.set(NAME, Buffer.from(JSON.stringify(login)).toString("base64url"), {
    httpOnly: true,
    sameSite: "lax",
    secure: keyfob().config.issuerUrl.startsWith("https:"),
    path: "/auth",
    maxAge: MAX_AGE,
  });
}

export async function rememberedLogin(): Promise<RememberedLogin | undefined> {
  const value = (await cookies()).get(NAME)?.value;
  if (!value) return undefined;
  try {
    const parsed = JSON.parse(Buffer.from(value, "base64url").toString("utf8")) as Partial<RememberedLogin>;
    if (typeof parsed.interactionId !== "string" || !parsed.interactionId) return undefined;
    return { interactionId: parsed.interactionId, returnTo: safeReturnTo(parsed.returnTo) };
  } catch {
    return undefined;
  }
}

export async function forgetLogin(): Promise<void> {
  (await cookies()).delete({ name: NAME, path: "/auth" });
}

const interactionPath = (interactionId: string) => `/auth/interaction/${interactionId}`;

export async function bindInteraction(interactionId: string): Promise<void> {
  (await cookies()).set(INTERACTION, interactionId, {
    httpOnly: true,
    sameSite: "lax",
    secure: keyfob().config.issuerUrl.startsWith("https:"),
    path: interactionPath(interactionId),
    maxAge: MAX_AGE,
  });
}

/** Whether this browser started the interaction: its page cookie, or a Google/Apple login it left for. */
export async function startedInThisBrowser(interactionId: string): Promise<boolean> {
  const jar = await cookies();
  return jar.get(INTERACTION)?.value === interactionId || (await rememberedLogin())?.interactionId === interactionId;
}

/**
 * How this browser signed in last time, so that the login page marks that way "Last used": not a
 * secret (it names a method, not an account), kept for a year, forgotten on "Not you?".
 */
const METHOD = "keyfob.last_method";
const METHODS: readonly Connector[] = ["web3", "passkey", "google", "apple"];

export async function rememberMethod(method: Connector): Promise<void> {
  (await cookies()).set(METHOD, method, {
    httpOnly: true,
    sameSite: "lax",
    secure: keyfob().config.issuerUrl.startsWith("https:"),
    path: "/auth",
    maxAge: 365 * 24 * 60 * 60,
  });
}

export async function lastMethod(): Promise<Connector | undefined> {
  const value = (await cookies()).get(METHOD)?.value;
  return METHODS.find((method) => method === value);
}

export async function forgetMethod(): Promise<void> {
  (await cookies()).delete({ name: METHOD, path: "/auth" });
}
