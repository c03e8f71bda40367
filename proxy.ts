/**
 * Security headers of the hosted pages (login, account, dashboard, and Auth.js's own pages under
 * /api/auth): no framing by other sites, a
 * Content-Security-Policy with a fresh script nonce per request (Next.js reads it from the request's
 * policy header and puts it on its own scripts), no referrer where URLs carry codes or states,
 * no MIME sniffing, and HSTS when the issuer is https. The protocol endpoints are not matched,
 * so this costs their requests nothing.
 */
import { NextResponse, type NextRequest } from "next/server";
import { PAGE_PATH_HEADER } from "./app/_lib/page-path";

export function proxy(request: NextRequest) {
  const nonce = Buffer.from(crypto.getRandomValues(new Uint8Array(16))).toString("base64");
  const https = (process.env.ISSUER_URL ?? "").startsWith("https:");
  const walletConnect = Boolean(process.env.WALLETCONNECT_PROJECT_ID?.trim());
  const policy = contentSecurityPolicy(nonce, { https, dev: process.env.NODE_ENV === "development", walletConnect });

  const headers = new Headers(request.headers);
  headers.set("content-security-policy", policy);
  // The root layout's <html lang> depends on the page (app/_lib/document-language.ts); set here, never the browser's.
  headers.set(PAGE_PATH_HEADER, request.nextUrl.pathname);
  const response = NextResponse.next({ request: { headers } });
  response.headers.set("Content-Security-Policy", policy);
  response.headers.set("X-Frame-Options", "DENY");
  response.headers.set("Referrer-Policy", carriesSecrets(request.nextUrl.pathname) ? "no-referrer" : "same-origin");
  response.headers.set("X-Content-Type-Options", "nosniff");
  if (https) response.headers.set("Strict-Transport-Security", "max-age=63072000; includeSubDomains");
  return response;
}

/**
 * Login URLs carry states, codes, interaction ids and (/device) user codes: no referrer at all. Elsewhere only Keyfob's own
 * pages get one, because with no referrer a browser sends `Origin: null` on same-origin form posts,
 * which the dashboard's sign-out and the logout confirmation check (a logout URL's ID token then
 * reaches Keyfob's own pages only).
 */
function carriesSecrets(pathname: string): boolean {
  return (
    pathname === "/auth" ||
    pathname.startsWith("/auth/") ||
    pathname === "/device" ||
    pathname === "/admin/callback" ||
    pathname.startsWith("/api/auth/callback/")
  );
}

/**
 * Scripts: only Next's own, by nonce ('strict-dynamic' lets them load their chunks). Styles allow
 * inline attributes (React style props, charts). Images: client logos are https URLs. Forms may
 * lead to the upstream providers and back to applications, which are https (http on a local issuer).
 * Connections: only Keyfob itself, plus, when WALLETCONNECT_PROJECT_ID is set, WalletConnect's relay
 * (phone wallets answer through it; its .com name is the fallback of its .org one) and the hidden
 * frame of its Verify API (an attestation of the page's origin, so that the phone wallet can show
 * the person that the request really comes from Keyfob's domain).
 */
export const WALLETCONNECT_RELAYS = ["wss://relay.walletconnect.org", "wss://relay.walletconnect.com"];
export const WALLETCONNECT_VERIFY = ["https://verify.walletconnect.org", "https://verify.walletconnect.com"];

export function contentSecurityPolicy(
  nonce: string,
  { https, dev, walletConnect = false }: { https: boolean; dev: boolean; walletConnect?: boolean },
): string {
  return [
    "default-src 'self'",
    `script-src 'self' 'nonce-${nonce}' 'strict-dynamic'${dev ? " 'unsafe-eval'" : ""}`,
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data: https:",
    "font-src 'self' data:",
    `connect-src 'self'${walletConnect ? ` ${WALLETCONNECT_RELAYS.join(" ")}` : ""}${dev ? " ws:" : ""}`,
    ...(walletConnect ? [`frame-src ${WALLETCONNECT_VERIFY.join(" ")}`] : []),
    "frame-ancestors 'none'",
    "base-uri 'none'",
    "object-src 'none'",
    `form-action 'self' https:${https ? "" : " http:"}`,
  ].join("; ");
}

export const config = {
  matcher: [
    "/",
    "/auth",
    "/auth/interaction/:path*",
    "/auth/error",
    "/auth/callback",
    "/account",
    "/account/:path*",
    "/admin",
    "/admin/:path*",
    "/session/end",
    "/device",
    "/api/auth/:path*",
  ],
};
