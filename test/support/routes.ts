/**
 * The protocol routes (lib/http/routes.ts) as tests call them: a web Request in, a web Response
 * out, answered by the route table as Keyfob's server answers it (server/protocol.ts: the body
 * read first, the answer as the table gives it), on the process-wide Keyfob or another instance.
 */
import type { Keyfob } from "@/lib/keyfob";
import { answerRoute, findRoute, PROTOCOL_ROUTES, type ProtocolRoute } from "@/lib/http/routes";
import { toResponse } from "@/lib/http/respond";
import { keyfob } from "@/lib/runtime";
import { ISSUER } from "./flow-a";

/** Answers `request` through the route table, on `on` (default: the process-wide Keyfob). */
export async function serveRequest(request: Request, on: Keyfob = keyfob()): Promise<Response> {
  const { pathname } = new URL(request.url);
  const found = findRoute(request.method, pathname);
  if (!found) throw new Error(`no protocol route for ${request.method} ${pathname}`);
  const body = request.method === "GET" || request.method === "HEAD" ? null : new Uint8Array(await request.arrayBuffer());
  const answer = await answerRoute(on, found, { method: request.method, url: request.url, headers: request.headers, body });
  return toResponse(request.method === "HEAD" ? { ...answer, body: undefined } : answer);
}

/**
 * The protocol route at `path` (exactly, or below it for a `/*` route), as a function of the
 * request: it refuses a request for another path, so a test cannot ask the wrong endpoint.
 */
export function route(path: string, on?: () => Keyfob) {
  return (request: Request): Promise<Response> => {
    const asked = new URL(request.url).pathname;
    if (asked !== path && !asked.startsWith(`${path}/`)) throw new Error(`a request for ${asked} sent to the route of ${path}`);
    return serveRequest(request, on?.());
  };
}

/** The table's JSON row for `path`, for a test that gives it another action (serveWith). */
export function protocolRoute(path: string): ProtocolRoute & { json: object } {
  const row = PROTOCOL_ROUTES.find((route) => route.path === path && "json" in route);
  if (!row || !("json" in row)) throw new Error(`no JSON protocol route at ${path}`);
  return row;
}

/** Answers requests with `row` on `on`: a table row a test changed (another action). */
export function serveWith(row: ProtocolRoute, on: Keyfob) {
  return async (request: Request): Promise<Response> => {
    const body = request.method === "GET" ? null : new Uint8Array(await request.arrayBuffer());
    return toResponse(await answerRoute(on, row, { method: request.method, url: request.url, headers: request.headers, body }));
  };
}

/** The protocol routes test files call, on one Keyfob instance (for tests that run two side by side). */
export function routesOn(k: Keyfob) {
  const on = () => k;
  return {
    generateChallenge: route("/auth/web3/generate_challenge", on),
    submitChallenge: route("/auth/web3/submit_challenge", on),
    token: route("/token", on),
    par: route("/par", on),
    revoke: route("/token/revoke", on),
    introspect: route("/token/introspect", on),
    userinfo: route("/userinfo", on),
  };
}

/** A form POST to `path` on the issuer, as clients send the protocol requests. */
export function formPost(path: string, fields: Record<string, string>, headers: Record<string, string> = {}): Request {
  return new Request(`${ISSUER}${path}`, {
    method: "POST",
    body: new URLSearchParams(fields).toString(),
    headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
  });
}
