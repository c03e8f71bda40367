/**
 * GET|POST /session/end: RP-Initiated Logout 1.0 (end_session_endpoint). lib/ decides
 * (decideEndSession); the endpoint wrapper applies the per-address rate limit and counts it; this
 * handler renders the confirmation, error and signed-out pages, ends the login session and clears
 * its cookies. The confirmation posts back here, from this origin only.
 */
import { cookies } from "next/headers";
import { decideEndSession } from "@/lib/actions/end-session";
import { endpoint, otherMethods, type Page } from "@/lib/http/endpoint";
import { readParams, type Params } from "@/lib/oauth/params";
import { endSession } from "@/lib/sessions/login-session";
import { reasonText, translator } from "@/i18n/messages";
import { chooseLocale, type Locale } from "@/i18n/locales";
import { busyPage } from "../../_lib/busy-page";
import { escapeHtml, htmlPage } from "../../_lib/html-page";
import { clearSessionCookie, currentLoginSession } from "../../auth/session-cookie";

export const dynamic = "force-dynamic";

export const { PUT, PATCH, DELETE, OPTIONS } = otherMethods("GET", "POST");

/** What the confirmation form carries back. */
const FORWARDED = ["id_token_hint", "client_id", "post_logout_redirect_uri", "state", "ui_locales"];

/** The pages' language: ui_locales (RP-Initiated Logout 1.0 section 2), then Accept-Language. */
const localeOf = (request: Request, params?: Params) => chooseLocale(params?.get("ui_locales"), request.headers.get("accept-language"));

const endSessionPage: Page<Params> = {
  read: (request) => readParams(request),
  async answer(k, request, params) {
    const locale = localeOf(request, params);
    const t = translator(locale, "logout");
    const origin = request.headers.get("origin");
    const confirmed =
      request.method === "POST" && params.get("logout") === "confirm" && (!origin || origin === new URL(k.config.issuerUrl).origin);
    const session = await currentLoginSession();
    const decision = await decideEndSession(k, params, session, confirmed);
    if (decision.kind === "error")
      return { response: errorPage(locale, reasonText(locale, decision.reason)), refused: decision.reason.code };
    if (decision.kind === "confirm") return confirmationPage(locale, params, decision.clientName);

    await endSession(k, await clearSessionCookie());
    await clearUpstreamSession();
    if (session) k.audit.record({ action: "session.ended", outcome: "success", accountId: session.accountId, detail: "logout" });
    if (decision.location)
      return new Response(null, { status: 303, headers: { Location: decision.location, "Cache-Control": "no-store" } });
    return htmlPage({
      status: 200,
      lang: locale,
      eyebrow: t("signedOutEyebrow"),
      title: t("signedOutTitle"),
      heading: t("signedOutTitle"),
      paragraphs: [t("signedOut")],
    });
  },
  refuse(error, { request, params }) {
    const locale = localeOf(request, params);
    const t = translator(locale, "logout");
    const busy = busyPage(
      locale,
      error,
      { tooManyTitle: t("tooManyTitle"), tooMany: t("tooMany"), unavailableTitle: t("unavailableTitle"), unavailable: t("unavailable") },
      [t("errorNotSent")],
    );
    // Anything else is a request that could not be read.
    return busy ?? errorPage(locale, t("unreadable"));
  },
};

/** Auth.js's own session cookie (the upstream login), so a new login starts from scratch. */
async function clearUpstreamSession() {
  const jar = await cookies();
  for (const { name } of jar.getAll()) if (/^(__Secure-)?authjs\.session-token/.test(name)) jar.delete(name);
}

function confirmationPage(locale: Locale, params: Params, clientName: string | undefined): Response {
  const t = translator(locale, "logout");
  const hidden = FORWARDED.map((name) => [name, params.get(name)] as const)
    .filter(([, value]) => value !== undefined)
    .map(([name, value]) => `<input type="hidden" name="${name}" value="${escapeHtml(value!)}">`)
    .join("");
  return htmlPage({
    status: 200,
    lang: locale,
    eyebrow: t("confirmEyebrow"),
    title: t("confirmTitle"),
    heading: t("confirmTitle"),
    paragraphs: [clientName ? t("confirmClient", { client: clientName }) : t("confirmUnknown"), t("confirmIgnore")],
    actions: `<form action="/session/end" method="post">${hidden}<input type="hidden" name="logout" value="confirm"><button type="submit">${escapeHtml(t("confirmButton"))}</button></form>`,
  });
}

function errorPage(locale: Locale, description: string): Response {
  const t = translator(locale, "logout");
  return htmlPage({
    status: 400,
    lang: locale,
    eyebrow: t("errorEyebrow"),
    title: t("errorTitle"),
    heading: t("errorTitle"),
    paragraphs: [description, t("errorNotSent")],
  });
}

export const GET = endpoint("end_session", endSessionPage);
export const POST = GET;
