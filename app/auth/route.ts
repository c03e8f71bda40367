/**
 * GET|POST /auth: the authorization endpoint of the code flow (OpenID Connect Core 3.1.2.1: both
 * methods, POST form-encoded). lib/ checks the request (startAuthorization); this handler applies
 * the rate limits, and answers: an untrusted client_id or redirect_uri with an error page (400,
 * never a redirect); other errors and prompt=none with a redirect to the application; otherwise a
 * redirect to the login page of a new interaction, bound to this browser by a cookie.
 */
import { startAuthorization } from "@/lib/actions/authorize";
import { claimedClientId } from "@/lib/clients/registry";
import { clientIp } from "@/lib/http/client-ip";
import { toOAuthError } from "@/lib/http/respond";
import { log } from "@/lib/log";
import { requestDuration, requests } from "@/lib/metrics";
import { readBodyText } from "@/lib/oauth/params";
import { limitProtocolRequest } from "@/lib/rate-limit";
import { keyfob } from "@/lib/runtime";
import { htmlPage, type HtmlPage } from "../_lib/html-page";
import { bindInteraction } from "./login-cookie";
import { currentLoginSession } from "./session-cookie";

export const dynamic = "force-dynamic";

const seeOther = (location: string) => new Response(null, { status: 303, headers: { Location: location, "Cache-Control": "no-store", "Referrer-Policy": "no-referrer" } });

async function authorize(request: Request): Promise<Response> {
  const started = performance.now();
  const k = keyfob();
  let outcome = "success";
  try {
    const query = request.method === "POST" ? await formParameters(request) : new URL(request.url).searchParams;
    const ip = clientIp(request);
    await limitProtocolRequest(k, "authorize", { ip, clientId: claimedClientId(query.get("client_id")) });
    const start = await startAuthorization(k, query, { session: await currentLoginSession(), ip });
    if (start.kind === "redirect") return seeOther(start.location);
    if (start.kind === "error") {
      outcome = "untrusted_request";
      return untrustedRequest(start.description, query);
    }
    await bindInteraction(start.interactionId);
    return seeOther(`/auth/interaction/${start.interactionId}`);
  } catch (caught) {
    const error = toOAuthError(caught);
    outcome = error.code;
    if (error.status >= 500) log.error("authorization failed", { endpoint: "authorize", error: error.code, cause: caught instanceof Error ? caught.name : typeof caught });
    else log.info("authorization refused", { endpoint: "authorize", status: error.status, error: error.code });
    if (error.status === 429) return refusal(429, "Too many sign-in attempts", "Too many sign-in requests came from this network or for this application. Wait a moment, then try again.", error.retryAfter);
    if (error.status >= 500) return refusal(503, "Sign-in is unavailable", "Keyfob could not start the sign-in just now. Please try again in a moment.", error.retryAfter ?? 5);
    return refusal(error.status, "This sign-in link doesn't work", error.message);
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
function untrustedRequest(description: string, query: URLSearchParams): Response {
  const received = (name: string) => ({ before: `${name}:`, code: query.get(name)?.slice(0, 500) ?? "(none)" });
  return refusal(400, "This sign-in link doesn't work", description, undefined, [
    received("client_id"),
    received("redirect_uri"),
    "For your safety you have not been sent anywhere. Go back to the application and try again. If this keeps happening, its developers should check that the client ID is registered with Keyfob and enabled, and that the redirect URI is registered for it exactly as sent.",
  ]);
}

function refusal(status: number, heading: string, description: string, retryAfter?: number, more?: HtmlPage["paragraphs"]): Response {
  return htmlPage({
    status,
    eyebrow: status === 429 ? "429 · Too many requests" : status >= 500 ? `${status} · Unavailable` : `${status} · Sign-in link refused`,
    title: heading,
    heading,
    paragraphs: [description, ...(more ?? ["You have not been sent anywhere. Go back to the application and try again."])],
    headers: retryAfter ? { "Retry-After": String(retryAfter) } : {},
  });
}

export const GET = authorize;
export const POST = authorize;
