/**
 * The login session's cookie (lib/sessions/login-session.ts): an opaque token, httpOnly,
 * SameSite=Lax, Secure when the issuer is https, for the whole site, until the session's end.
 */
import { cookies, headers } from "next/headers";
import { CLIENT_IP_HEADER } from "@/lib/http/client-ip";
import { findSession, sessionCookieName, type LoginSession } from "@/lib/sessions/login-session";
import { keyfob } from "@/lib/runtime";

/** The browser's live login session with Keyfob, if any. */
export async function currentLoginSession(): Promise<LoginSession | undefined> {
  return findSession(keyfob(), (await cookies()).get(cookieName())?.value);
}

export async function setSessionCookie(session: { token: string; expiresAt: Date } | undefined): Promise<void> {
  if (!session) return;
  (await cookies()).set(cookieName(), session.token, {
    httpOnly: true,
    sameSite: "lax",
    secure: keyfob().config.issuerUrl.startsWith("https:"),
    path: "/",
    expires: session.expiresAt,
  });
}

export async function clearSessionCookie(): Promise<string | undefined> {
  const jar = await cookies();
  const token = jar.get(cookieName())?.value;
  jar.delete({ name: cookieName(), path: "/", secure: keyfob().config.issuerUrl.startsWith("https:") });
  return token;
}

const cookieName = () => sessionCookieName(keyfob().config);

/** Who is logging in from where, kept with the session for the dashboard. */
export async function loginClient(): Promise<{ ip?: string; userAgent?: string }> {
  const h = await headers();
  return { ip: h.get(CLIENT_IP_HEADER) ?? undefined, userAgent: h.get("user-agent") ?? undefined };
}
