import { decodeJwt } from "jose";
import type { Caller } from "../audit";
import type { Keyfob } from "../keyfob";
import { log } from "../log";
import { requestDuration, requests, tokensIssued } from "../metrics";
import { claimedClientId } from "../clients/client-id";
import { confidentialClientId, parseBasic } from "../oauth/client-auth";
import { dpopNonce } from "../oauth/dpop";
import { readParams, type Params, type ReadParams } from "../oauth/params";
import { limitAdminSignIn, limitProtocolRequest } from "../rate-limit";
import { keyfob as runtimeKeyfob } from "../runtime";
import type { Issued } from "../tokens/issue";
import { clientIp } from "./client-ip";
import { clientCors, preflightResponse } from "./cors";
import type { OAuthError } from "../oauth/errors";
import type { HttpRequest } from "./request";
import { describe, errorAnswer, errorResponse, jsonAnswer, toOAuthError, toResponse, type JsonAnswer } from "./respond";

/**
 * What each endpoint gets from the wrapper, in one place. JSON endpoints (the protocol's APIs): CORS
 * for browser applications (the calling client's origins), where credentials may be sent, and, for
 * token endpoints, their failures' audit events and the issued tokens' count; `creates`: answered
 * 201 Created (PAR, RFC 9126 2.2). Page endpoints (the
 * browser's: redirects and HTML pages) answer and refuse in their own way (see Page). Resource
 * endpoints (metadata, health, metrics, the management API, Auth.js, dashboard downloads) build
 * their whole answer, headers included (see Resource). Every one: its
 * rate limit (`protocol`: per client when it authenticates with its secret, else per address, one
 * budget across endpoints; `admin_signin`: RATE_LIMIT_ADMIN_SIGNIN), metrics and log lines.
 * Introspection stays server-to-server (no CORS). Flow A keeps taking every parameter from the
 * query, as its existing clients send them there. Endpoints that check DPoP proofs (`dpop`) answer
 * a request carrying one with a fresh server nonce in DPoP-Nonce (RFC 9449 8), whatever the outcome;
 * a request without one gets the answer it always had.
 */
const ENDPOINTS = {
  generate_challenge: { answer: "json", cors: true, limit: "protocol" },
  submit_challenge: { answer: "json", cors: true, limit: "protocol", issues: true, dpop: true },
  token: { answer: "json", cors: true, limit: "protocol", issues: true, credentialsInBody: true, dpop: true },
  revoke: { answer: "json", cors: true, limit: "protocol", credentialsInBody: true },
  pushed_authorization_request: { answer: "json", cors: true, limit: "protocol", credentialsInBody: true, creates: true },
  device_authorization: { answer: "json", cors: true, limit: "protocol", credentialsInBody: true },
  introspect: { answer: "json", cors: false, limit: "protocol", credentialsInBody: true },
  userinfo: { answer: "json", cors: true, limit: false, dpop: true },
  authorize: { answer: "page", limit: "protocol" },
  end_session: { answer: "page", limit: "protocol" },
  admin_login: { answer: "page", limit: "admin_signin" },
  admin_callback: { answer: "page", limit: "admin_signin" },
  auth_callback: { answer: "page", limit: false },
  account_callback: { answer: "page", limit: false },
  account_login: { answer: "page", limit: "protocol" },
  account_return: { answer: "page", limit: false },
  admin_try_start: { answer: "page", limit: false },
  admin_try_callback: { answer: "page", limit: false },
  discovery: { answer: "resource", limit: false },
  jwks: { answer: "resource", limit: false },
  health_live: { answer: "resource", limit: false },
  health_ready: { answer: "resource", limit: false },
  metrics: { answer: "resource", limit: false },
  admin_api: { answer: "resource", limit: false },
  admin_logout: { answer: "resource", limit: false },
  admin_forbidden: { answer: "resource", limit: false },
  admin_audit_export: { answer: "resource", limit: false },
  upstream_auth: { answer: "resource", limit: false },
} as const satisfies Record<string, Policy>;

/** Secrets that never belong in a URL, where logs and histories keep them (RFC 6749 2.3.1, RFC 9700 4.14). */
const BODY_ONLY = ["client_secret", "code", "code_verifier", "refresh_token", "token", "device_code"];

export type EndpointName = keyof typeof ENDPOINTS;
type Limit = "protocol" | "admin_signin" | false;
type Policy =
  | { answer: "json"; cors: boolean; limit: Limit; issues?: boolean; credentialsInBody?: boolean; creates?: boolean; dpop?: boolean }
  | {
      answer: "page" | "resource";
      limit: Limit;
      cors?: undefined;
      issues?: undefined;
      credentialsInBody?: undefined;
      creates?: undefined;
      dpop?: undefined;
    };
type JsonName = { [N in EndpointName]: (typeof ENDPOINTS)[N]["answer"] extends "json" ? N : never }[EndpointName];

/** A JSON endpoint's action: its answer, or for a token endpoint its Issued tokens (recorded and audited by the action itself, for `caller`). */
type Action<N extends EndpointName> = (
  keyfob: Keyfob,
  request: HttpRequest,
  params: ReadParams,
  caller: Caller,
) => Promise<(typeof ENDPOINTS)[N] extends { issues: true } ? Issued<unknown> : unknown>;

/** A refusal a page endpoint shows as its answer (an error redirect, an error page): `refused` is its outcome for the metrics and the log. */
export type Shown = { response: Response; refused: string };

/**
 * A page endpoint: a redirect or an HTML page, and its own way of showing a failure. `read` takes
 * the parameters (a failure is counted against the limits, then refused); `early` answers a request
 * that must not be counted at all (a React Server Components fetch of a sign-in step).
 */
export type Page<P> = {
  early?: (request: Request) => Response | undefined;
  read?: (request: Request) => Promise<P>;
  answer: (keyfob: Keyfob, request: Request, params: P, caller: Caller) => Promise<Response | Shown>;
  /** The failure as the browser sees it; `limited` when the limits refused it, before the answer. */
  refuse: (error: OAuthError, context: { keyfob: Keyfob; request: Request; params?: P; limited: boolean }) => Response | Promise<Response>;
};

/**
 * A resource endpoint: it builds its whole answer, headers and refusals included (a refusal as
 * Shown, for the metrics and the log). What it throws becomes `refuse`'s answer, by default the
 * OAuth JSON error.
 */
export type Resource = {
  answer: (keyfob: Keyfob, request: Request) => Response | Shown | Promise<Response | Shown>;
  refuse?: (error: OAuthError) => Response;
};

type ResourceName = { [N in EndpointName]: (typeof ENDPOINTS)[N]["answer"] extends "resource" ? N : never }[EndpointName];

type Definition<N extends EndpointName> = N extends JsonName
  ? Action<N>
  : N extends ResourceName
    ? Resource
    : // biome-ignore lint/suspicious/noExplicitAny: a page reads parameters of its own type, which only its definition knows
      Page<any>;

/**
 * A JSON endpoint's route handler, and the same endpoint answering as plain values (`answer`): the
 * direct dispatch calls that on a plain request, with no web Request or Response made
 * (server/protocol-routes.ts).
 */
export type JsonHandler = ((request: Request) => Promise<Response>) & { answer: (request: HttpRequest) => Promise<JsonAnswer> };

type Handler<N extends EndpointName> = N extends JsonName ? JsonHandler : (request: Request) => Promise<Response>;

/**
 * Wraps an endpoint as a route handler: reads the parameters, applies the endpoint's rate limits
 * (and CORS), maps every failure (toOAuthError) to the documented error body or the page's refusal,
 * logs one line per refusal or failure (never the parameters' values), counts requests and their
 * duration in the metrics and audits token endpoints' failures. `keyfob` is the process-wide one
 * unless a test supplies another.
 */
export function endpoint<N extends EndpointName>(name: N, definition: Definition<N>, keyfob: () => Keyfob = runtimeKeyfob): Handler<N> {
  const policy: Policy = ENDPOINTS[name];
  if (policy.answer === "json") {
    const answer = jsonEndpoint(name as JsonName, policy, definition as Action<JsonName>, keyfob);
    const handler = async (request: Request) => toResponse(await answer(request));
    return Object.assign(handler, { answer }) as Handler<N>;
  }
  const page = policy.answer === "page" ? (definition as Page<unknown>) : undefined;
  const resource = policy.answer === "resource" ? (definition as Resource) : undefined;
  return (async (request: Request): Promise<Response> => {
    const early = page?.early?.(request);
    if (early) return early;
    const k = keyfob();
    const served = serving(name);
    let params: unknown;
    let limited = true;
    const caller: Caller = { endpoint: name, ip: clientIp(request) };
    const shown = (answer: Response | Shown) => {
      if (answer instanceof Response) return answer;
      served.refused(answer.refused, answer.response.status);
      return answer.response;
    };
    try {
      if (resource) return shown(await resource.answer(k, request));
      // Bad parameters are counted against the limits too: read first, refuse after counting.
      let readError: unknown;
      params = await (page?.read ?? queryParams)(request).catch((error: unknown) => {
        readError = error;
        return undefined;
      });
      await limit(k, policy, name, caller);
      limited = false;
      if (readError) throw readError;
      return shown(await page!.answer(k, request, params, caller));
    } catch (caught) {
      const error = served.failed(caught);
      if (page) return page.refuse(error, { keyfob: k, request, params, limited });
      return resource?.refuse ? resource.refuse(error) : errorResponse(error);
    } finally {
      served.done();
    }
  }) as Handler<N>;
}

/** A JSON endpoint: its answer as plain values (JsonAnswer), on any HttpRequest. */
function jsonEndpoint(name: JsonName, policy: Extract<Policy, { answer: "json" }>, action: Action<JsonName>, keyfob: () => Keyfob) {
  return async (request: HttpRequest): Promise<JsonAnswer> => {
    const k = keyfob();
    const served = serving(name);
    let clientId: string | undefined;
    let cors: Record<string, string> = policy.cors ? { Vary: "Origin" } : {};
    const caller: Caller = { endpoint: name, ip: clientIp(request) };
    const nonce: Record<string, string> = policy.dpop && request.headers.has("dpop") ? { "DPoP-Nonce": dpopNonce(k) } : {};
    try {
      // Bad parameters are counted against the limits too: read first, refuse after counting.
      let readError: unknown;
      const params = await readParams(request, policy.credentialsInBody ? BODY_ONLY : undefined).catch((error: unknown) => {
        readError = error;
        return undefined;
      });
      clientId = requestClientId(request, params);
      const authenticatedClient = policy.credentialsInBody && params ? await confidentialClientId(k.clients, request, params) : undefined;
      await limit(k, policy, name, caller, authenticatedClient);
      if (readError || !params) throw readError;
      if (policy.cors) cors = await clientCors(k, request, clientId);
      const result = await action(k, request, params, caller);
      if (!policy.issues) return jsonAnswer(result, policy.creates ? 201 : 200, { ...cors, ...nonce });
      const { response, flow, connector } = result as Issued<unknown>;
      tokensIssued.inc({ flow, connector });
      return jsonAnswer(response, 200, { ...cors, ...nonce });
    } catch (caught) {
      const error = served.failed(caught);
      // The reason is the error_description the client got: never a secret, token or signature.
      if (policy.issues)
        k.audit.record({ action: "token.failed", outcome: error.code, detail: `${name}: ${error.message}`, ip: caller.ip, clientId });
      return errorAnswer(error, { ...cors, ...nonce });
    } finally {
      served.done();
    }
  };
}

/** Counts a request against its endpoint's rate limit (`authenticatedClient`: a client that authenticated with its secret). */
function limit(k: Keyfob, policy: Policy, name: EndpointName, caller: Caller, authenticatedClient?: string): Promise<void> {
  if (policy.limit === "admin_signin") return limitAdminSignIn(k, caller.ip);
  if (policy.limit === "protocol") return limitProtocolRequest(k, name, { ip: caller.ip, authenticatedClient });
  return Promise.resolve();
}

/** One request's outcome, for the metrics and the log: a line per refusal or failure, never the parameters' values. */
function serving(name: EndpointName) {
  const started = performance.now();
  let outcome = "success";
  const ms = () => Math.round(performance.now() - started);
  const refused = (code: string, status: number) => {
    outcome = code;
    log.info("request refused", { endpoint: name, status, error: code, ms: ms() });
  };
  return {
    refused,
    /** The failure as the client sees it (toOAuthError), logged as a refusal or, at 500 and above, a failure. */
    failed(caught: unknown): OAuthError {
      const error = toOAuthError(caught);
      if (error.status >= 500) {
        outcome = error.code;
        log.error("request failed", { endpoint: name, status: error.status, error: error.code, ms: ms(), cause: describe(caught) });
      } else refused(error.code, error.status);
      return error;
    },
    done() {
      requests.inc({ endpoint: name, outcome });
      requestDuration.observe({ endpoint: name }, (performance.now() - started) / 1000);
    },
  };
}

/** A page endpoint's parameters when it says nothing else: the query. */
const queryParams = async (request: Request) => new URL(request.url).searchParams;

/** The OPTIONS handler of an endpoint that browser applications call. */
export function preflight(methods: string) {
  return async (request: Request): Promise<Response> => preflightResponse(request, methods);
}

/**
 * The client a request says it comes from, before anything is verified: Basic credentials, the
 * client_id parameter, or the audience of an access token (userinfo, Bearer or DPoP). For limits, CORS and the audit
 * log; a value that cannot be a client id names none.
 */
function requestClientId(request: HttpRequest, params: Params | undefined): string | undefined {
  let id: string | undefined;
  try {
    id = parseBasic(request.headers.get("authorization"))?.id;
  } catch {
    // A malformed header is refused by the action itself.
  }
  id ??= params?.get("client_id");
  if (id === undefined) {
    const bearer = /^(?:Bearer|DPoP)\s+(\S+)$/i.exec(request.headers.get("authorization") ?? "")?.[1] ?? params?.get("access_token");
    try {
      const aud = bearer ? decodeJwt(bearer).aud : undefined;
      if (typeof aud === "string") id = aud;
    } catch {
      // Not a JWT: verifyAccessToken says so.
    }
  }
  return claimedClientId(id);
}
