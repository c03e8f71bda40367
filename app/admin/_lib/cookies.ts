/** Cookie attributes of the admin session, shared by the sign-in and sign-out routes. */
import { ADMIN_LOGIN_COOKIE, ADMIN_SESSION_SECONDS, adminSessionCookieName } from "@/lib/admin/session";
import type { Keyfob } from "@/lib/keyfob";

type CookieOptions = { httpOnly: boolean; sameSite: "lax"; secure: boolean; path: string; maxAge: number };

const secure = (k: Keyfob) => k.config.issuerUrl.startsWith("https:");

export const loginCookie = (k: Keyfob, maxAge = 600): [string, CookieOptions] => [
  ADMIN_LOGIN_COOKIE,
  { httpOnly: true, sameSite: "lax", secure: secure(k), path: "/admin", maxAge },
];

export const sessionCookie = (k: Keyfob, maxAge = ADMIN_SESSION_SECONDS): [string, CookieOptions] => [
  adminSessionCookieName(k),
  { httpOnly: true, sameSite: "lax", secure: secure(k), path: "/", maxAge },
];
