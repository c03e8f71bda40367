/**
 * GET|POST /auth: the authorization endpoint of the code flow (OpenID Connect Core 3.1.2.1: both
 * methods, POST form-encoded). lib/ checks the request (startAuthorization); the endpoint wrapper
 * applies the rate limits and counts it; this handler answers: an untrusted client_id or
 * redirect_uri with an error page (400, never a redirect); other errors and prompt=none with a
 * redirect to the application; otherwise a redirect to the login page of a new interaction, bound
 * to this browser by a cookie.
 */
import { startAuthorization } from "@/lib/actions/authorize";
import { endpoint, otherMethods, type Page } from "@/lib/http/endpoint";
import type { OAuthError } from "@/lib/oauth/errors";
import { readBodyText } from "@/lib/oauth/params";
import type { Reason } from "@/lib/oauth/reasons";
import { reasonText, translator } from "@/i18n/messages";
import { chooseLocale, type Locale } from "@/i18n/locales";
import { busyPage } from "../_lib/busy-page";
import { htmlPage, type HtmlPage } from "../_lib/html-page";
import { bindInteraction } from "./login-cookie";
import { currentLoginSession } from "./session-cookie";

export const dynamic = "force-dynamic";

export const { PUT, PATCH, DELETE, OPTIONS } = otherMethods("GET", "POST");

const seeOther = (location: string) =>
  new Response(null, { status: 303, headers: { Location: location, "Cache-Control": "no-store", "Referrer-Policy": "no-referrer" } });

/** The refusal pages' language: the request's ui_locales, then Accept-Language. */
const localeOf = (request: Request, query?: URLSearchParams) =>
  chooseLocale(query?.get("ui_locales"), request.headers.get("accept-language"));

const authorize: Page<URLSearchParams> = {
  read: async (request) => (request.method === "POST" ? formParameters(request) : new URL(request.url).searchParams),
  async answer(k, request, query, caller) {
    const start = await startAuthorization(k, query, { session: await currentLoginSession(), ip: caller.ip });
    if (start.kind === "redirect")
      return start.error ? { response: seeOther(start.location), refused: start.error } : seeOther(start.location);
    if (start.kind === "error")
      return { response: untrustedRequest(localeOf(request, query), start.reason, query), refused: "untrusted_request" };
    await bindInteraction(start.interactionId);
    return seeOther(`/auth/interaction/${start.interactionId}`);
  },
  refuse(error: OAuthError, { request, params }) {
    const locale = localeOf(request, params);
    const t = translator(locale, "refusal");
    const busy = busyPage(
      locale,
      error,
      { tooManyTitle: t("tooManyTitle"), tooMany: t("tooMany"), unavailableTitle: t("unavailableTitle"), unavailable: t("unavailable") },
      [t("notSent")],
    );
    return busy ?? refusal(locale, error.status, error.why ? reasonText(locale, error.why) : error.message);
  },
};

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
  return refusal(locale, 400, reasonText(locale, reason), [
    received(t("receivedClientId"), "client_id"),
    received(t("receivedRedirectUri"), "redirect_uri"),
    t("whatToCheck"),
  ]);
}

function refusal(locale: Locale, status: number, description: string, more?: HtmlPage["paragraphs"]): Response {
  const t = translator(locale, "refusal");
  return htmlPage({
    status,
    lang: locale,
    eyebrow: t("eyebrow400", { status }),
    title: t("linkTitle"),
    heading: t("linkTitle"),
    paragraphs: [description, ...(more ?? [t("notSent")])],
  });
}

export const GET = endpoint("authorize", authorize);
export const POST = GET;
