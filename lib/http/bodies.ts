import type { HttpRequest } from "./request";

/**
 * Bodies the direct dispatch (server/protocol-routes.ts) already holds as bytes or text, kept beside
 * its Request and Response objects so that neither side copies them through a web stream again:
 * the dispatch has read a request's body from Node's stream and creates the Request without one,
 * and writes a JSON answer's text without reading it back from the Response. Under Next.js the
 * bodies are the objects' own. Measured on /token (2026-11-24 profile): the undici stream copies
 * were 11% of the server's CPU per exchange.
 */
const requestBodies = new WeakMap<HttpRequest, Buffer>();
const responseTexts = new WeakMap<Response, string>();

/** A request whose body was read before it was created: `body` is what was read. */
export function withReadBody<R extends HttpRequest>(request: R, body: Buffer): R {
  requestBodies.set(request, body);
  return request;
}

/** The bytes read for a request before it was created, if any. */
export function readBodyOf(request: HttpRequest): Buffer | undefined {
  return requestBodies.get(request);
}

/** A Response whose body is `text`, remembered for the dispatch. */
export function withText(response: Response, text: string): Response {
  responseTexts.set(response, text);
  return response;
}

/** The text a Response was made with (withText), if known. */
export function textOf(response: Response): string | undefined {
  return responseTexts.get(response);
}
