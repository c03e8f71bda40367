import { decodeJwt } from "jose";
import type { AuditLog } from "../audit";
import { log } from "../log";
import { parseBasic } from "../oauth/client-auth";
import { OAuthError } from "../oauth/errors";
import { readParams, type Params } from "../oauth/params";
import { decodeSubject } from "../tokens/sub";

const NO_STORE = { "Cache-Control": "no-store", Pragma: "no-cache" };

/** A JSON response that no cache may keep (RFC 6749 5.1). */
export function jsonResponse(body: unknown, status = 200, headers: Record<string, string> = NO_STORE): Response {
  return Response.json(body, { status, headers });
}

/** The error as the client sees it: an OAuthError as is; a database outage as 503; anything else as 500 without details. */
export function toOAuthError(error: unknown): OAuthError {
  if (error instanceof OAuthError) return error;
  if (isUnavailable(error)) return new OAuthError("temporarily_unavailable", "a dependency is unavailable; try again shortly");
  return new OAuthError("server_error", "the server could not complete the request");
}

export function errorResponse(error: OAuthError): Response {
  const headers: Record<string, string> = { ...NO_STORE };
  if (error.code === "invalid_token") headers["WWW-Authenticate"] = `Bearer error="invalid_token"`;
  if (error.code === "invalid_client") headers["WWW-Authenticate"] = `Basic realm="keyfob"`;
  if (error.status === 503) headers["Retry-After"] = "5";
  return jsonResponse(error.toJSON(), error.status, headers);
}

export type EndpointOptions = {
  /** Audit token issuance and failures here (token endpoints). */
  audit?: () => AuditLog;
};

/**
 * Wraps a protocol action as a route handler: reads the parameters (query and form body), turns
 * every failure into the documented error body, logs one line per refusal or failure (never the
 * parameters' values), and audits token endpoints.
 */
export function endpoint(name: string, action: (request: Request, params: Params) => Promise<unknown>, options: EndpointOptions = {}) {
  return async (request: Request): Promise<Response> => {
    const started = performance.now();
    let params: Params | undefined;
    try {
      params = await readParams(request);
      const result = await action(request, params);
      if (options.audit) options.audit().record({ action: "token.issued", outcome: "success", detail: name, ip: clientIp(request), ...tokenParties(result) });
      return jsonResponse(result);
    } catch (caught) {
      const error = toOAuthError(caught);
      const fields = { endpoint: name, status: error.status, error: error.code, ms: Math.round(performance.now() - started) };
      if (error.status >= 500) {
        log.error("request failed", { ...fields, cause: describe(caught) });
      } else {
        log.info("request refused", fields);
      }
      if (options.audit) {
        options.audit().record({ action: "token.failed", outcome: error.code, detail: name, ip: clientIp(request), clientId: claimedClientId(request, params) });
      }
      return errorResponse(error);
    }
  };
}

/** The client and account a token response was issued to, read back from its access token. */
function tokenParties(result: unknown): { clientId?: string; accountId?: string } {
  const accessToken = (result as { access_token?: unknown })?.access_token;
  if (typeof accessToken !== "string") return {};
  const { aud, sub } = decodeJwt(accessToken);
  return { clientId: typeof aud === "string" ? aud : undefined, accountId: sub ? decodeSubject(sub).userId : undefined };
}

function claimedClientId(request: Request, params: Params | undefined): string | undefined {
  try {
    const id = parseBasic(request.headers.get("authorization"))?.id ?? params?.get("client_id");
    return id?.slice(0, 200);
  } catch {
    return params?.get("client_id")?.slice(0, 200);
  }
}

/**
 * The caller's address for the audit log: the last X-Forwarded-For entry, the one added by the
 * nearest proxy (or by Next's server from the socket when there is none); earlier entries are
 * whatever the client sent.
 */
export function clientIp(request: Request): string | undefined {
  return request.headers.get("x-forwarded-for")?.split(",").at(-1)?.trim() || undefined;
}

const UNAVAILABLE_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "ENOTFOUND", "EAI_AGAIN", "57P01", "57P03", "53300", "P1001", "P1002", "P1017", "P2024"]);

function isUnavailable(error: unknown): boolean {
  for (let e = error as { code?: unknown; cause?: unknown; name?: string } | undefined, depth = 0; e && depth < 5; depth++) {
    if (typeof e.code === "string" && UNAVAILABLE_CODES.has(e.code)) return true;
    if (e.name === "PrismaClientInitializationError") return true;
    e = e.cause as typeof e;
  }
  return false;
}

/** The error's class and code for the log: enough to investigate, no values from the request. */
function describe(error: unknown): string {
  if (!(error instanceof Error)) return typeof error;
  const code = (error as { code?: unknown }).code;
  return `${error.name}${code ? ` ${String(code)}` : ""}: ${error.message.split("\n")[0].slice(0, 200)}`;
}
