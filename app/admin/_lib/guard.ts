/**
 * The dashboard's server-side check, run by the layout (so a full page load gets a real redirect
 * before anything streams) and again by every page (client-side navigations render only the page).
 * Signed out → /admin/login; signed in but not an admin → /admin/forbidden (HTTP 403).
 */
import { cookies } from "next/headers";
import { redirect } from "next/navigation";
import { cache } from "react";
import { AdminAccessError, requireAdmin, type Admin } from "@/lib/admin/access";
import { adminSessionCookieName } from "@/lib/admin/session";
import { claimedClientId } from "@/lib/clients/client-id";
import type { Keyfob } from "@/lib/keyfob";
import { keyfob } from "@/lib/runtime";

export const LOGIN_PATH = "/admin/login";
export const FORBIDDEN_PATH = "/admin/forbidden";

/** The dashboard session's token from its cookie. */
export async function sessionToken(): Promise<string | undefined> {
  return (await cookies()).get(adminSessionCookieName(keyfob()))?.value;
}

/** The signed-in admin, once per request; redirects everyone else. */
export const adminPage = cache(async (): Promise<{ k: Keyfob; admin: Admin }> => {
  const k = keyfob();
  try {
    return { k, admin: await requireAdmin(k, await sessionToken()) };
  } catch (error) {
    if (error instanceof AdminAccessError) redirect(error.reason === "signed-out" ? LOGIN_PATH : FORBIDDEN_PATH);
    throw error;
  }
});

/** A route's signed-in admin, or where to send anyone else (303: sign in, or forbidden). */
export async function adminOrElsewhere(k: Keyfob): Promise<Admin | Response> {
  try {
    return await requireAdmin(k, await sessionToken());
  } catch (error) {
    if (error instanceof AdminAccessError) return seeOther(error.reason === "signed-out" ? LOGIN_PATH : FORBIDDEN_PATH);
    throw error;
  }
}

/** A 303 to `location`, never cached. */
export const seeOther = (location: string) =>
  new Response(null, { status: 303, headers: { Location: location, "Cache-Control": "no-store" } });

/**
 * A client id from a path segment, or undefined when the segment cannot be one (a broken
 * percent-encoding, a control character): such a page is simply not found.
 */
export function clientIdSegment(segment: string): string | undefined {
  try {
    return claimedClientId(decodeURIComponent(segment));
  } catch {
    return undefined;
  }
}

/** A query parameter as one string. */
export function param(value: string | string[] | undefined): string {
  return (Array.isArray(value) ? value[0] : value)?.trim() ?? "";
}

export function pageNumber(value: string | string[] | undefined): number {
  const n = Number.parseInt(param(value), 10);
  return Number.isFinite(n) && n > 0 ? Math.min(n, 100_000) : 1;
}

export type SearchParams = Promise<Record<string, string | string[] | undefined>>;
