/**
 * The protocol endpoints without Next.js's request pipeline. Each path maps to its route module in
 * app/ (the one definition of the endpoint), and a request whose method that module exports is
 * answered by that very handler: a JSON endpoint's on a plain request over the node request, its
 * answer written as it is (JsonHandler.answer: no web Request, Headers or Response, 0.05-0.085 ms
 * per request); any other's on a web Request made from the node request, its Response written back.
 * Every other request (pages, HEAD, an unexported method, a trailing slash…) goes to Next.js, which
 * also serves these endpoints under `next dev`.
 *
 * Why: Next's pipeline (routing, its request and response adapters, async storage) cost more per
 * request than node-oidc-provider's whole code exchange; see bench/README.md for the measurements.
 * The handlers use no request-scoped Next.js API (next/headers, cookies()), which only exist inside
 * Next's pipeline; test/fast-dispatch.test.ts checks the table against the route files.
 */
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from "node:http";
import { textOf, withReadBody } from "../lib/http/bodies";
import type { JsonHandler } from "../lib/http/endpoint";
import type { HttpRequest } from "../lib/http/request";
import { MAX_BODY_BYTES } from "../lib/oauth/params";

/** What a route module exports that the dispatch may call. */
type Handler = ((request: Request) => Response | Promise<Response>) | JsonHandler;
export type RouteModule = Partial<Record<(typeof METHODS)[number], Handler>>;

const METHODS = ["GET", "POST", "OPTIONS", "PUT", "PATCH", "DELETE"] as const;

/** The protocol endpoints: path → route module, loaded when the server starts. */
export const PROTOCOL_ROUTES: Record<string, () => Promise<RouteModule>> = {
  "/token": () => import("../app/token/route"),
  "/token/revoke": () => import("../app/token/revoke/route"),
  "/par": () => import("../app/par/route"),
  "/token/introspect": () => import("../app/token/introspect/route"),
  "/device/authorization": () => import("../app/device/authorization/route"),
  "/userinfo": () => import("../app/userinfo/route"),
  "/auth/web3/generate_challenge": () => import("../app/auth/web3/generate_challenge/route"),
  "/auth/web3/submit_challenge": () => import("../app/auth/web3/submit_challenge/route"),
  "/keys": () => import("../app/keys/route"),
  "/.well-known/jwks.json": () => import("../app/.well-known/jwks.json/route"),
  "/.well-known/openid-configuration": () => import("../app/.well-known/openid-configuration/route"),
  "/healthz/live": () => import("../app/healthz/live/route"),
  "/healthz/ready": () => import("../app/healthz/ready/route"),
};

/** "POST /token" → the handler app/token/route.ts exports as POST. */
export type DispatchTable = Map<string, Handler>;

export async function loadDispatchTable(routes = PROTOCOL_ROUTES): Promise<DispatchTable> {
  const table: DispatchTable = new Map();
  for (const [path, load] of Object.entries(routes)) {
    const module = await load();
    for (const method of METHODS) {
      const handler = module[method];
      if (typeof handler === "function") table.set(`${method} ${path}`, handler);
    }
  }
  return table;
}

/**
 * Next.js adds this Vary to every route handler's answer (its router's own request headers); the
 * dispatch adds it too, so that an answer is the same whichever way it was served.
 */
const NEXT_VARY = "rsc, next-router-state-tree, next-router-prefetch, next-router-segment-prefetch";

/**
 * The handler for this request, or undefined when Next.js is to serve it. Matches the path
 * exactly, as Next does for these routes (a trailing slash is Next's redirect).
 */
export function protocolHandler(table: DispatchTable, request: IncomingMessage): Handler | undefined {
  const url = request.url ?? "/";
  const query = url.indexOf("?");
  return table.get(`${request.method} ${query < 0 ? url : url.slice(0, query)}`);
}

/**
 * Serves a request with a protocol handler. Its body is read up to one byte past Keyfob's limit and
 * handed over as bytes (lib/http/bodies.ts). A JSON endpoint answers a plain request (`origin` + its
 * URL, its headers as node read them) with plain values; any other handler gets a web Request and
 * its Response is written back with its status, headers and body.
 */
export async function dispatch(handler: Handler, origin: string, request: IncomingMessage, response: ServerResponse): Promise<void> {
  const method = request.method ?? "GET";
  const read = method !== "GET" && method !== "HEAD" ? await readBody(request) : undefined;
  const url = `${origin}${request.url ?? "/"}`;
  if ("answer" in handler) {
    const plain: HttpRequest = { method, url, headers: nodeHeaders(request.headers), body: null };
    const answer = await handler.answer(read ? withReadBody(plain, read.body) : plain);
    writeAnswer(response, answer.status, Object.entries(answer.headers), answer.text, read?.unread);
    return;
  }
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers)) {
    if (value === undefined) continue;
    if (Array.isArray(value)) for (const v of value) headers.append(name, v);
    else headers.set(name, value);
  }
  const webRequest = new Request(url, { method, headers });
  const answer = await handler(read ? withReadBody(webRequest, read.body) : webRequest);
  const content = textOf(answer) ?? (answer.body ? Buffer.from(await answer.arrayBuffer()) : undefined);
  // A web Headers yields each Set-Cookie on its own (Fetch's "sort and combine"), so each stays a line of its own.
  writeAnswer(response, answer.status, answer.headers, content, read?.unread);
}

/** Node's request headers as a web Request's would answer for them (names are lowercase in both). */
function nodeHeaders(headers: IncomingHttpHeaders): HttpRequest["headers"] {
  const get = (name: string) => {
    const value = headers[name.toLowerCase()];
    return value === undefined ? null : Array.isArray(value) ? value.join(", ") : value;
  };
  return { get, has: (name) => get(name) !== null };
}

/**
 * Writes an answer as Next writes it: Next's Vary first, names in lowercase, a header given several
 * values (Vary from Next and from the handler, Set-Cookie) on a line each. Node frames the body by its
 * length (given to end() before the head is written: not chunked). After an oversized body left
 * `unread`, the connection ends with the answer.
 */
function writeAnswer(
  response: ServerResponse,
  status: number,
  headers: Iterable<[string, string]>,
  content: string | Buffer | undefined,
  unread = false,
): void {
  const out = new Map<string, string | string[]>([["vary", NEXT_VARY]]);
  for (const [name, value] of headers) {
    const key = name.toLowerCase();
    const seen = out.get(key);
    out.set(key, seen === undefined ? value : [...(Array.isArray(seen) ? seen : [seen]), value]);
  }
  if (unread) out.set("connection", "close");
  for (const [name, value] of out) response.setHeader(name, value);
  response.statusCode = status;
  response.end(content);
}

/**
 * The body, read up to MAX_BODY_BYTES + 1 bytes: enough for the handler to refuse a larger one
 * with 413 as it does a streamed body (lib/oauth/params.ts). A body declared larger is not read at all.
 */
function readBody(request: IncomingMessage): Promise<{ body: Buffer; unread: boolean }> {
  if (Number(request.headers["content-length"]) > MAX_BODY_BYTES) return Promise.resolve({ body: Buffer.alloc(0), unread: true });
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      chunks.push(chunk);
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        request.off("data", onData);
        request.off("end", onEnd);
        resolve({ body: Buffer.concat(chunks).subarray(0, MAX_BODY_BYTES + 1), unread: true });
      }
    };
    const onEnd = () => resolve({ body: chunks.length === 1 ? chunks[0] : Buffer.concat(chunks), unread: false });
    request.on("data", onData);
    request.on("end", onEnd);
    request.on("error", reject);
  });
}
