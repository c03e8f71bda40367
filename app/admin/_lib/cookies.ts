/** Cookie attributes of the admin session, shared by the sign-in and sign-out routes. */
import { SETUP_CODE_SECONDS } from "@/lib/admin/first-admin";
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

/** The first admin's set-up code, between the set-up link and the sign-in's end (app/admin/setup). */
export const SETUP_COOKIE = "keyfob_admin_setup";

export const setupCookie = (k: Keyfob, maxAge = SETUP_CODE_SECONDS): [string, CookieOptions] => [
  SETUP_COOKIE,
  { httpOnly: true, sameSite: "lax", secure: secure(k), path: "/admin", maxAge },
];
