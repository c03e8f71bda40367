/**
 * The protocol routes (lib/http/routes.ts) over Node's HTTP: a request for one of their paths is
 * read into a plain HttpRequest, its body as bytes (up to one byte past Keyfob's limit, so that the
 * route refuses a larger one with 413), answered by the route table and written as it answers. No
 * web Request, Headers or Response is made (docs/decisions/2026-11-27-plain-requests.md).
 */
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from "node:http";
import type { HttpRequest } from "../lib/http/request";
import { answerRoute, findRoute } from "../lib/http/routes";
import type { Keyfob } from "../lib/keyfob";
import { MAX_BODY_BYTES } from "../lib/oauth/params";

/** The protocol route for this request, or undefined when the path is not a protocol path (Next.js serves it). */
export function protocolRoute(request: IncomingMessage) {
  const url = request.url ?? "/";
  const query = url.indexOf("?");
  return findRoute(request.method ?? "GET", query < 0 ? url : url.slice(0, query));
}

/** Serves a request that protocolRoute found a route for. */
export async function serveProtocol(
  keyfob: Keyfob,
  found: NonNullable<ReturnType<typeof protocolRoute>>,
  origin: string,
  request: IncomingMessage,
  response: ServerResponse,
): Promise<void> {
  const method = request.method ?? "GET";
  const read = method !== "GET" && method !== "HEAD" ? await readBody(request) : undefined;
  const plain: HttpRequest = {
    method,
    url: `${origin}${request.url ?? "/"}`,
    headers: nodeHeaders(request.headers),
    body: read?.body ?? null,
  };
  const answer = await answerRoute(keyfob, found, plain);
  for (const [name, value] of Object.entries(answer.headers)) response.setHeader(name, value);
  // After an oversized body left unread, the connection ends with the answer.
  if (read?.unread) response.setHeader("Connection", "close");
  response.statusCode = answer.status;
  // Framed by its length (given to end() before the head is written: not chunked).
  response.end(method === "HEAD" ? undefined : answer.body);
}

/** Node's request headers as a web Request's would answer for them (names are lowercase in both). */
function nodeHeaders(headers: IncomingHttpHeaders): HttpRequest["headers"] {
  const get = (name: string) => {
    const value = headers[name.toLowerCase()];
    return value === undefined ? null : Array.isArray(value) ? value.join(", ") : value;
  };
  return { get, has: (name) => get(name) !== null };
}

/** The body, read up to MAX_BODY_BYTES + 1 bytes; a body declared larger is not read at all. */
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
