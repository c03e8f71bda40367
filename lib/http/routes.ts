import { decodeJwt } from "jose";
import { generateChallenge } from "../actions/generate-challenge";
import { deviceAuthorization } from "../actions/device-authorization";
import { introspectToken } from "../actions/introspect";
import { pushAuthorizationRequest } from "../actions/pushed-authorization";
import { revokeToken } from "../actions/revoke";
import { submitChallenge } from "../actions/submit-challenge";
import { token } from "../actions/token";
import { userinfo } from "../actions/userinfo";
import { VEHICLE_TOKEN_EXCHANGE_PATH, vehicleTokenExchange } from "../actions/vehicle-token-exchange";
import { API_BASE, managementApi } from "../admin/api";
import { openApiDocument } from "../admin/openapi";
import type { Caller } from "../audit";
import { claimedClientId } from "../clients/client-id";
import { readiness } from "../health";
import type { Keyfob } from "../keyfob";
import { tokensIssued } from "../metrics";
import { assertionIssuer, type AssertionVerifier } from "../oauth/client-assertion";
import { authenticateClient, cachedClients, parseBasic, storedClients, usesBasic, type AuthenticatedClient } from "../oauth/client-auth";
import { dpopNonce } from "../oauth/dpop";
import type { OAuthError } from "../oauth/errors";
import { readParams, type Params } from "../oauth/params";
import { isDraining } from "../runtime";
import type { Issued } from "../tokens/issue";
import { clientIp } from "./client-ip";
import { clientCors, preflightAnswer } from "./cors";
import { discoveryAnswer, jwksAnswer } from "./metadata";
import { VEHICLE_JWKS_PATH } from "../discovery";
import { metricsAnswer } from "./metrics";
import type { HttpRequest, ProtocolRequest } from "./request";
import { errorAnswer, jsonAnswer, type Answer, type Refused } from "./respond";
import { countRequest, serving, type Limit } from "./serving";

/**
 * The protocol endpoints, in one table: each row is a method (or several) and a path, the
 * endpoint's name (metrics, logs, audit), its policy and its action. Keyfob's server answers them
 * in every mode (server/serve.ts), before and without Next.js, which serves the pages, their
 * server actions and the browser's redirect endpoints in app/. Adding an endpoint is one row here
 * and one action module in lib/actions/.
 *
 * A JSON row's policy: `cors`, answers readable by the calling client's registered origins (browser
 * applications); `limit`, the budget its requests count against; `issues`, a token endpoint (its
 * tokens counted, its failures audited); `credentialsInBody`, client credentials and grants are
 * accepted in the body only, never in the URL (RFC 6749 2.3.1, RFC 9700 4.14); `creates`, answered
 * 201 (PAR, RFC 9126 2.2); `dpop`, a request with a DPoP proof gets a fresh nonce whatever the
 * outcome (RFC 9449 8); `storedClient`, the client is read from the database rather than the
 * instance's cache (the token endpoint's statements check it again there; these do not);
 * `jsonBody` and `platformErrors`, the platform's JSON framing (its token-exchange endpoint). A resource row builds its whole answer (metadata, health, metrics, the
 * management API). A GET row answers HEAD too; OPTIONS is a CORS preflight for a `cors` row and
 * the methods for the others; another method on a known path is 405.
 */

export type Method = "GET" | "POST" | "PATCH" | "DELETE";

export type JsonPolicy = {
  cors: boolean;
  limit: Limit;
  issues?: boolean;
  credentialsInBody?: boolean;
  creates?: boolean;
  dpop?: boolean;
  storedClient?: boolean;
  /** The body is JSON, which the action reads itself; the parameters are the query's. */
  jsonBody?: boolean;
  /** Errors in the platform's shape, `{"code": <status>, "message": "..."}` (with OAuth's `error` and `error_description`), the OAuth error's status and headers. */
  platformErrors?: boolean;
};

/** A JSON row's action: its answer's body, or for a token endpoint its Issued tokens (recorded and audited by the action itself, for the request's caller). */
export type JsonAction = (keyfob: Keyfob, request: ProtocolRequest) => Promise<unknown>;

/** A resource row's answer; what it throws is answered as `refuse` says (the OAuth JSON error unless it says otherwise). */
export type Resource = {
  answer: (keyfob: Keyfob, request: HttpRequest) => Answer | Refused | Promise<Answer | Refused>;
  refuse?: (error: OAuthError) => Answer;
};

export type ProtocolRoute = {
  methods: readonly Method[];
  /** The exact path, or, ending in `/*`, the path and everything below it (the management API). */
  path: string;
  endpoint: string;
} & ({ json: JsonPolicy; action: JsonAction } | { resource: Resource });

const json = (methods: Method | Method[], path: string, endpoint: string, policy: JsonPolicy, action: JsonAction): ProtocolRoute => ({
  methods: [methods].flat(),
  path,
  endpoint,
  json: policy,
  action,
});

const resource = (methods: Method | Method[], path: string, endpoint: string, definition: Resource): ProtocolRoute => ({
  methods: [methods].flat(),
  path,
  endpoint,
  resource: definition,
});

const tokenEndpoint = { cors: true, limit: "protocol", issues: true, credentialsInBody: true, dpop: true } as const;
const clientEndpoint = { cors: true, limit: "protocol", credentialsInBody: true, storedClient: true } as const;

const noStore = { "Cache-Control": "no-store" };

export const PROTOCOL_ROUTES: readonly ProtocolRoute[] = [
  // Flow A keeps taking every parameter from the query too, as its existing clients send them there.
  json(["GET", "POST"], "/auth/web3/generate_challenge", "generate_challenge", { cors: true, limit: "protocol" }, generateChallenge),
  json(
    "POST",
    "/auth/web3/submit_challenge",
    "submit_challenge",
    { cors: true, limit: "protocol", issues: true, dpop: true },
    submitChallenge,
  ),
  json("POST", "/token", "token", tokenEndpoint, token),
  json("POST", "/token/revoke", "revoke", clientEndpoint, revokeToken),
  json("POST", "/par", "pushed_authorization_request", { ...clientEndpoint, creates: true, dpop: true }, pushAuthorizationRequest),
  json("POST", "/device/authorization", "device_authorization", { ...clientEndpoint, storedClient: false }, deviceAuthorization),
  // Introspection stays server-to-server: no CORS.
  json("POST", "/token/introspect", "introspect", { ...clientEndpoint, cors: false }, introspectToken),
  json(["GET", "POST"], "/userinfo", "userinfo", { cors: true, limit: false, dpop: true }, userinfo),
  // The platform's token-exchange endpoint, for its SDKs: the RFC 8693 grant's decision in its JSON framing.
  json(
    "POST",
    VEHICLE_TOKEN_EXCHANGE_PATH,
    "vehicle_token_exchange",
    { cors: true, limit: "protocol", issues: true, dpop: true, jsonBody: true, platformErrors: true },
    vehicleTokenExchange,
  ),
  resource("GET", "/keys", "jwks", { answer: (k) => jwksAnswer(k.keys) }),
  resource("GET", VEHICLE_JWKS_PATH, "vehicle_jwks", { answer: (k) => jwksAnswer(k.vehicleKeys) }),
  resource("GET", "/.well-known/jwks.json", "jwks", { answer: (k) => jwksAnswer(k.keys) }),
  resource("GET", "/.well-known/openid-configuration", "discovery", { answer: discoveryAnswer }),
  // RFC 8414 3: the same document, as authorization server metadata (its issuer is the issuer this path is formed from).
  resource("GET", "/.well-known/oauth-authorization-server", "discovery", { answer: discoveryAnswer }),
  resource("GET", "/healthz/live", "health_live", { answer: () => jsonAnswer({ status: "ok" }, 200, noStore) }),
  resource("GET", "/healthz/ready", "health_ready", {
    answer: async (k) => {
      const { ready, checks } = await readiness(k, isDraining());
      const answer = jsonAnswer({ status: ready ? "ok" : "unavailable", checks }, ready ? 200 : 503, noStore);
      return ready ? answer : { answer, refused: "temporarily_unavailable" };
    },
  }),
  resource("GET", "/metrics", "metrics", { answer: (k, request) => metricsAnswer(k.config.metricsToken, request) }),
  resource(
    ["GET", "POST", "PATCH", "DELETE"],
    `${API_BASE}/*`,
    "admin_api",
    managementApi((k) => openApiDocument(k.config.issuerUrl)),
  ),
];

/** The route for a method and a path: the row, or the methods the path has (405), or none (not a protocol path). */
export function findRoute(method: string, path: string, routes = PROTOCOL_ROUTES): ProtocolRoute | { allowed: string[] } | undefined {
  const rows = routes.filter((route) => (route.path.endsWith("/*") ? underPrefix(path, route.path.slice(0, -2)) : route.path === path));
  if (rows.length === 0) return undefined;
  const asked = method === "HEAD" ? "GET" : method;
  const row = rows.find((route) => route.methods.includes(asked as Method));
  if (row && method !== "OPTIONS") return row;
  const methods = [...new Set(rows.flatMap((route) => route.methods))];
  return { allowed: [...methods, ...(methods.includes("GET") ? ["HEAD"] : []), "OPTIONS"] };
}

const underPrefix = (path: string, prefix: string) => path === prefix || path.startsWith(`${prefix}/`);

/**
 * Answers a request for a protocol path (findRoute found something): the row's answer, a
 * preflight, or 405. A HEAD is answered as its GET (the server writes no body for it).
 */
export async function answerRoute(keyfob: Keyfob, found: ProtocolRoute | { allowed: string[] }, request: HttpRequest): Promise<Answer> {
  if (!("endpoint" in found)) {
    if (request.method !== "OPTIONS") return { status: 405, headers: { Allow: found.allowed.join(", ") } };
    const corsRow = PROTOCOL_ROUTES.find((route) => "json" in route && route.json.cors && route.path === new URL(request.url).pathname);
    return corsRow ? preflightAnswer(request, corsRow.methods.join(", ")) : { status: 204, headers: { Allow: found.allowed.join(", ") } };
  }
  return "json" in found ? answerJson(keyfob, found, request) : answerResource(keyfob, found, request);
}

/**
 * A JSON row: reads the parameters, counts the request against its limit, applies CORS, runs the
 * action, and maps every failure (toOAuthError) to the documented error body; one log line per
 * refusal or failure (never the parameters' values), the request's metrics, and for a token
 * endpoint its failures' audit events and the issued tokens' count.
 */
async function answerJson(
  k: Keyfob,
  route: ProtocolRoute & { json: JsonPolicy; action: JsonAction },
  request: HttpRequest,
): Promise<Answer> {
  const { json: policy, endpoint } = route;
  const served = serving(endpoint);
  let clientId: string | undefined;
  let cors: Record<string, string> = policy.cors ? { Vary: "Origin" } : {};
  const caller: Caller = { endpoint, ip: clientIp(request) };
  const nonce: Record<string, string> = policy.dpop && request.headers.has("dpop") ? { "DPoP-Nonce": dpopNonce(k) } : {};
  try {
    // Bad parameters are counted against the limits too: read first, refuse after counting.
    let readError: unknown;
    const read = policy.jsonBody ? { method: request.method, url: request.url, headers: request.headers, body: null } : request;
    const params = await readParams(read, policy.credentialsInBody ? BODY_ONLY : undefined).catch((error: unknown) => {
      readError = error;
      return undefined;
    });
    clientId = requestClientId(request, params);
    let authentication: Promise<AuthenticatedClient> | undefined;
    const source = policy.storedClient ? storedClients(k.store) : cachedClients(k.clients);
    const client = () =>
      (authentication ??= authenticateClient(source, request, params ?? EMPTY_PARAMS, k.clock.now(), assertionVerifier(k)));
    // A client that authenticates with its secret counts against its own budget.
    const authenticatedClient =
      policy.credentialsInBody && params
        ? await client().then(
            (c) => (c.confidential ? c.id : undefined),
            () => undefined,
          )
        : undefined;
    await countRequest(k, policy.limit, caller, authenticatedClient);
    if (readError || !params) throw readError;
    if (policy.cors) cors = await clientCors(k, request, clientId);
    const result = await route.action(k, { http: request, params, caller, client });
    if (!policy.issues) return jsonAnswer(result, policy.creates ? 201 : 200, { ...cors, ...nonce });
    const { response, flow, connector } = result as Issued<unknown>;
    tokensIssued.inc({ flow, connector });
    return jsonAnswer(response, 200, { ...cors, ...nonce });
  } catch (caught) {
    const error = served.failed(caught);
    // The reason is the error_description the client got: never a secret, token or signature.
    if (policy.issues && !DEVICE_WAITS.has(error.code))
      k.audit.record({ action: "token.failed", outcome: error.code, detail: `${endpoint}: ${error.message}`, ip: caller.ip, clientId });
    const answer = errorAnswer(error, { ...cors, ...nonce }, usesBasic(request.headers.get("authorization")));
    if (!policy.platformErrors) return answer;
    return {
      ...answer,
      body: JSON.stringify({ code: error.status, message: error.message, error: error.code, error_description: error.message }),
    };
  } finally {
    served.done();
  }
}

/** A resource row: its answer as it builds it; a refusal or a failure counted and logged as any other. */
async function answerResource(k: Keyfob, route: ProtocolRoute & { resource: Resource }, request: HttpRequest): Promise<Answer> {
  const served = serving(route.endpoint);
  try {
    const answer = await route.resource.answer(k, request);
    if (!("refused" in answer)) return answer;
    served.refused(answer.refused, answer.answer.status);
    return answer.answer;
  } catch (caught) {
    const error = served.failed(caught);
    return route.resource.refuse ? route.resource.refuse(error) : errorAnswer(error);
  } finally {
    served.done();
  }
}

const EMPTY_PARAMS: Params = { get: () => undefined };

/** What checking a client assertion needs of the instance: jwks_uri fetches follow the back-channel logout's outbound rules. */
export const assertionVerifier = (k: Keyfob): AssertionVerifier => ({
  issuer: k.config.issuerUrl,
  store: k.store,
  signatures: k.signatures,
  jwks: { allowed: k.config.backchannelLogoutAllowedNetworks },
  secretKey: k.clientSecretKey,
});

/** A device's poll told to wait (RFC 8628 3.5): a step of the flow, not a failed token request (the dashboard counts those). */
const DEVICE_WAITS = new Set(["authorization_pending", "slow_down"]);

/** Secrets that never belong in a URL, where logs and histories keep them (RFC 6749 2.3.1, RFC 9700 4.14). */
const BODY_ONLY = ["client_secret", "client_assertion", "code", "code_verifier", "refresh_token", "token", "device_code"];

/**
 * The client a request says it comes from, before anything is verified: Basic credentials, the
 * client_id parameter, or the audience of an access token (userinfo, Bearer or DPoP). For limits,
 * CORS and the audit log; a value that cannot be a client id names none.
 */
function requestClientId(request: HttpRequest, params: Params | undefined): string | undefined {
  let id: string | undefined;
  try {
    id = parseBasic(request.headers.get("authorization"))?.id;
  } catch {
    // A malformed header is refused by the action itself.
  }
  id ??= params?.get("client_id");
  const assertion = params?.get("client_assertion");
  if (id === undefined && assertion !== undefined) id = assertionIssuer(assertion);
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
