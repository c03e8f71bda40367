import type { Keyfob } from "../keyfob";
import { normalizeClientId } from "../clients/client-id";
import { invalidRequest } from "../oauth/errors";
import type { HttpRequest } from "./request";
import type { Answer } from "./respond";

/** Headers a browser may read from a cross-origin answer besides the CORS-safelisted ones. */
const EXPOSED = "WWW-Authenticate, Retry-After, DPoP-Nonce";

/**
 * CORS for endpoints that browser applications call (RFC 6749 public clients: single-page and
 * mobile web apps). An answer is readable by the origins of the calling client's registered
 * redirect URIs and its extra allowed origins, never with credentials. A request from any other
 * origin is refused before it does anything: a form-encoded POST needs no preflight, so the
 * browser would send it even though it could not read the answer.
 * Returns the headers to add to the answer (none for same-origin and server-to-server calls).
 */
export async function clientCors(
  keyfob: Pick<Keyfob, "config" | "clients">,
  request: HttpRequest,
  clientId: string | undefined,
): Promise<Record<string, string>> {
  const origin = request.headers.get("origin");
  if (!origin || origin === new URL(keyfob.config.issuerUrl).origin) return { Vary: "Origin" };
  if (!clientId || !(await keyfob.clients.get(normalizeClientId(clientId)))?.origins.has(origin)) {
    throw invalidRequest("this origin is not allowed for the client; register it as a redirect URI origin or an allowed origin");
  }
  return { "Access-Control-Allow-Origin": origin, "Access-Control-Expose-Headers": EXPOSED, Vary: "Origin" };
}

/** Answers a CORS preflight: any origin may ask; the request itself is then checked against the client. */
export function preflightAnswer(request: HttpRequest, methods: string): Answer {
  const origin = request.headers.get("origin");
  const headers: Record<string, string> = { Vary: "Origin", "Cache-Control": "no-store" };
  if (origin && request.headers.get("access-control-request-method")) {
    Object.assign(headers, {
      "Access-Control-Allow-Origin": origin,
      "Access-Control-Allow-Methods": methods,
      "Access-Control-Allow-Headers": "Authorization, Content-Type, DPoP",
      "Access-Control-Max-Age": "600",
    });
  }
  return { status: 204, headers };
}

/** Public metadata (discovery, JWKS): readable from any origin. */
export const PUBLIC_CORS = { "Access-Control-Allow-Origin": "*" } as const;
