import { decodeJwt } from "jose";
import type { Caller } from "../audit";
import type { Keyfob } from "../keyfob";
import { log } from "../log";
import { requestDuration, requests, tokensIssued } from "../metrics";
import { claimedClientId } from "../clients/registry";
import { confidentialClientId, parseBasic } from "../oauth/client-auth";
import { readParams, type Params } from "../oauth/params";
import { limitProtocolRequest } from "../rate-limit";
import { keyfob as runtimeKeyfob } from "../runtime";
import type { Issued } from "../tokens/issue";
import { clientIp } from "./client-ip";
import { clientCors, preflightResponse } from "./cors";
import { describe, errorResponse, jsonResponse, toOAuthError } from "./respond";

/**
 * What each protocol endpoint gets from the wrapper, in one place: CORS for browser applications
 * (the calling client's origins), the rate limits (per client when it authenticates with its
 * secret, else per address), where credentials may be sent, and, for token endpoints, their
 * failures' audit events and the issued tokens' count.
 * Introspection stays server-to-server (no CORS). Flow A keeps taking every parameter from the
 * query, as its existing clients send them there.
 */
const ENDPOINTS = {
  generate_challenge: { cors: true, rateLimited: true },
  submit_challenge: { cors: true, rateLimited: true, issues: true },
  token: { cors: true, rateLimited: true, issues: true, credentialsInBody: true },
  revoke: { cors: true, rateLimited: true, credentialsInBody: true },
  introspect: { cors: false, rateLimited: true, credentialsInBody: true },
  userinfo: { cors: true, rateLimited: false },
} as const satisfies Record<string, Policy>;

/** Secrets that never belong in a URL, where logs and histories keep them (RFC 6749 2.3.1, RFC 9700 4.14). */
const BODY_ONLY = ["client_secret", "code", "code_verifier", "refresh_token", "token"];

export type EndpointName = keyof typeof ENDPOINTS;
type Policy = { cors: boolean; rateLimited: boolean; issues?: boolean; credentialsInBody?: boolean };
/** An endpoint's action: its answer, or for a token endpoint its Issued tokens (recorded and audited by the action itself, for `caller`). */
type Action<N extends EndpointName> = (
  keyfob: Keyfob,
  request: Request,
  params: Params,
  caller: Caller,
) => Promise<(typeof ENDPOINTS)[N] extends { issues: true } ? Issued<unknown> : unknown>;

/**
 * Wraps a protocol action as a route handler: reads the parameters (query and form body), applies
 * the endpoint's rate limits and CORS, turns every failure into the documented error body, logs one
 * line per refusal or failure (never the parameters' values), counts it in the metrics and audits
 * token endpoints' failures. `keyfob` is the process-wide one unless a test supplies another.
 */
export function endpoint<N extends EndpointName>(name: N, action: Action<N>, keyfob: () => Keyfob = runtimeKeyfob) {
  const policy: Policy = ENDPOINTS[name];
  return async (request: Request): Promise<Response> => {
    const started = performance.now();
    const k = keyfob();
    let params: Params | undefined;
    let clientId: string | undefined;
    let cors: Record<string, string> = policy.cors ? { Vary: "Origin" } : {};
    let outcome = "success";
    const caller: Caller = { endpoint: name, ip: clientIp(request) };
    try {
      // Bad parameters are counted against the limits too: read first, refuse after counting.
      let readError: unknown;
      params = await readParams(request, policy.credentialsInBody ? BODY_ONLY : undefined).catch((error: unknown) => {
        readError = error;
        return undefined;
      });
      clientId = requestClientId(request, params);
      if (policy.rateLimited) {
        const authenticatedClient = policy.credentialsInBody && params ? await confidentialClientId(k.clients, request, params) : undefined;
        await limitProtocolRequest(k, name, { ip: caller.ip, authenticatedClient });
      }
      if (readError) throw readError;
      if (policy.cors) cors = await clientCors(k, request, clientId);
      const result = await action(k, request, params!, caller);
      if (!policy.issues) return jsonResponse(result, 200, cors);
      const { response, flow, connector } = result as Issued<unknown>;
      tokensIssued.inc({ flow, connector });
      return jsonResponse(response, 200, cors);
    } catch (caught) {
      const error = toOAuthError(caught);
      outcome = error.code;
      const fields = { endpoint: name, status: error.status, error: error.code, ms: Math.round(performance.now() - started) };
      if (error.status >= 500) log.error("request failed", { ...fields, cause: describe(caught) });
      else log.info("request refused", fields);
      // The reason is the error_description the client got: never a secret, token or signature.
      if (policy.issues) k.audit.record({ action: "token.failed", outcome: error.code, detail: `${name}: ${error.message}`, ip: caller.ip, clientId });
      return errorResponse(error, cors);
    } finally {
      requests.inc({ endpoint: name, outcome });
      requestDuration.observe({ endpoint: name }, (performance.now() - started) / 1000);
    }
  };
}

/** The OPTIONS handler of an endpoint that browser applications call. */
export function preflight(methods: string) {
  return async (request: Request): Promise<Response> => preflightResponse(request, methods);
}

/**
 * The client a request says it comes from, before anything is verified: Basic credentials, the
 * client_id parameter, or the audience of an access token (userinfo). For limits, CORS and the audit
 * log; a value that cannot be a client id names none.
 */
function requestClientId(request: Request, params: Params | undefined): string | undefined {
  let id: string | undefined;
  try {
    id = parseBasic(request.headers.get("authorization"))?.id;
  } catch {
    // A malformed header is refused by the action itself.
  }
  id ??= params?.get("client_id");
  if (id === undefined) {
    const bearer = /^Bearer\s+(\S+)$/i.exec(request.headers.get("authorization") ?? "")?.[1] ?? params?.get("access_token");
    try {
      const aud = bearer ? decodeJwt(bearer).aud : undefined;
      if (typeof aud === "string") id = aud;
    } catch {
      // Not a JWT: verifyAccessToken says so.
    }
  }
  return claimedClientId(id);
}
