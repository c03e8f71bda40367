import type { OAuthError } from "@/lib/oauth/errors";
import { htmlPage } from "../../_lib/html-page";
import { fullPageLoadRequired, isRscRequest } from "./rsc";

/**
 * A sign-in step (/admin/login, /admin/callback) refused by RATE_LIMIT_ADMIN_SIGNIN: a page with 429
 * and Retry-After over the limit, 503 when the limit cannot be counted (or the step failed).
 */
export function signInLimitPage(error: OAuthError): Response {
  const limited = error.status === 429;
  return htmlPage({
    status: limited ? 429 : 503,
    eyebrow: limited ? "429 · Too many requests" : "503 · Unavailable",
    title: limited ? "Too many sign-in attempts" : "Sign-in is unavailable",
    heading: limited ? "Too many sign-in attempts" : "Sign-in is unavailable",
    paragraphs: [
      limited
        ? "Too many admin sign-ins came from this network. Wait a moment, then try again."
        : "Keyfob could not start the sign-in just now. Please try again in a moment.",
    ],
    headers: { "Retry-After": String(error.retryAfter ?? 5) },
  });
}

/** Sign-in steps run in a real browser navigation only, and such a fetch is not counted against the limit. */
export const browserNavigationOnly = (request: Request) => (isRscRequest(request) ? fullPageLoadRequired() : undefined);
