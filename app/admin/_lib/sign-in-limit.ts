import { clientIp } from "@/lib/http/client-ip";
import { toOAuthError } from "@/lib/http/respond";
import type { Keyfob } from "@/lib/keyfob";
import { limitAdminSignIn } from "@/lib/rate-limit";
import { htmlPage } from "../../_lib/html-page";

/**
 * Applies RATE_LIMIT_ADMIN_SIGNIN to a sign-in step (/admin/login, /admin/callback): a page with
 * 429 and Retry-After over the limit, 503 when the limit cannot be counted, undefined to go on.
 */
export async function adminSignInRefusal(k: Keyfob, request: Request): Promise<Response | undefined> {
  try {
    await limitAdminSignIn(k, clientIp(request));
    return undefined;
  } catch (caught) {
    const error = toOAuthError(caught);
    const limited = error.status === 429;
    return htmlPage({
      status: limited ? 429 : 503,
      eyebrow: limited ? "429 · Too many requests" : "503 · Unavailable",
      title: limited ? "Too many sign-in attempts" : "Sign-in is unavailable",
      heading: limited ? "Too many sign-in attempts" : "Sign-in is unavailable",
      paragraphs: [limited ? "Too many admin sign-ins came from this network. Wait a moment, then try again." : "Keyfob could not start the sign-in just now. Please try again in a moment."],
      headers: { "Retry-After": String(error.retryAfter ?? 5) },
    });
  }
}
