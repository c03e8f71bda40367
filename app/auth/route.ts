/**
 * GET|POST /auth: the authorization endpoint of the code flow (OpenID Connect Core 3.1.2.1: both
 * methods, POST form-encoded). lib/ checks the request (startAuthorization); this handler applies
 * the rate limits, and answers: an untrusted client_id or redirect_uri with an error page (400,
 * never a redirect); other errors and prompt=none with a redirect to the application; otherwise a
 * redirect to the login page of a new interaction, bound to this browser by a cookie.
 */
import { startAuthorization } from "@/lib/actions/authorize";
import { clientIp } from "@/lib/http/client-ip";
import { toOAuthError } from "@/lib/http/respond";
import { log } from "@/lib/log";
import { requestDuration, requests } from "@/lib/metrics";
import { readBodyText } from "@/lib/oauth/params";
import { limitProtocolRequest } from "@/lib/rate-limit";
import { keyfob } from "@/lib/runtime";
import type { Reason } from "@/lib/oauth/reasons";
import { reasonText, translator } from "@/i18n/messages";
import { chooseLocale, type Locale } from "@/i18n/locales";
import { htmlPage, type HtmlPage } from "../_lib/html-page";
import { bindInteraction } from "./login-cookie";
import { currentLoginSession } from "./session-cookie";

export const dynamic = "force-dynamic";

const seeOther = (location: string) => new Response(null, { status: 303, headers: { Location: location, "Cache-Control": "no-store", "Referrer-Policy": "no-referrer" } });

async function authorize(request: Request): Promise<Response> {
  const started = performance.now();
  const k = keyfob();
  let outcome = "success";
  // The refusal pages' language: the request's ui_locales, then Accept-Language.
  let locale = chooseLocale(undefined, request.headers.get("accept-language"));
  try {
    const query = request.method === "POST" ? await formParameters(request) : new URL(request.url).searchParams;
    locale = chooseLocale(query.get("ui_locales"), request.headers.get("accept-language"));
    const ip = clientIp(request);
    await limitProtocolRequest(k, "authorize", { ip });
    const start = await startAuthorization(k, query, { session: await currentLoginSession(), ip });
    if (start.kind === "redirect") return seeOther(start.location);
    if (start.kind === "error") {
      outcome = "untrusted_request";
      return untrustedRequest(locale, start.reason, query);
    }
    await bindInteraction(start.interactionId);
    return seeOther(`/auth/interaction/${start.interactionId}`);
  } catch (caught) {
    const error = toOAuthError(caught);
    outcome = error.code;
    if (error.status >= 500) log.error("authorization failed", { endpoint: "authorize", error: error.code, cause: caught instanceof Error ? caught.name : typeof caught });
    else log.info("authorization refused", { endpoint: "authorize", status: error.status, error: error.code });
    const t = translator(locale, "refusal");
    if (error.status === 429) return refusal(locale, 429, t("tooManyTitle"), t("tooMany"), error.retryAfter);
    if (error.status >= 500) return refusal(locale, 503, t("unavailableTitle"), t("unavailable"), error.retryAfter ?? 5);
    return refusal(locale, error.status, t("linkTitle"), error.why ? reasonText(locale, error.why) : error.message);
  } finally {
    requests.inc({ endpoint: "authorize", outcome });
    requestDuration.observe({ endpoint: "authorize" }, (performance.now() - started) / 1000);
  }
}

/** The parameters of a POSTed authorization request: a form-encoded body (at most 16 KiB). */
async function formParameters(request: Request): Promise<URLSearchParams> {
  const type = request.headers.get("content-type")?.split(";")[0].trim().toLowerCase();
  const text = await readBodyText(request);
  if (text && type !== "application/x-www-form-urlencoded") return new URLSearchParams();
  return new URLSearchParams(text);
}

/**
 * An unknown client or an unregistered redirect_uri: never a redirect (RFC 6749 4.1.2.1). The page
 * says what was received, so the application's developers see what to fix.
 */
function untrustedRequest(locale: Locale, reason: Reason, query: URLSearchParams): Response {
  const t = translator(locale, "refusal");
  const received = (label: string, name: string) => ({ before: label, code: query.get(name)?.slice(0, 500) ?? t("none") });
  return refusal(locale, 400, t("linkTitle"), reasonText(locale, reason), undefined, [
    received(t("receivedClientId"), "client_id"),
    received(t("receivedRedirectUri"), "redirect_uri"),
    t("whatToCheck"),
  ]);
}

function refusal(locale: Locale, status: number, heading: string, description: string, retryAfter?: number, more?: HtmlPage["paragraphs"]): Response {
  const t = translator(locale, "refusal");
  return htmlPage({
    status,
    lang: locale,
    eyebrow: status === 429 ? t("eyebrow429") : status >= 500 ? t("eyebrow503", { status }) : t("eyebrow400", { status }),
    title: heading,
    heading,
    paragraphs: [description, ...(more ?? [t("notSent")])],
    headers: retryAfter ? { "Retry-After": String(retryAfter) } : {},
  });
}

export const GET = authorize;
export const POST = authorize;
