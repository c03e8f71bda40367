/**
 * What Keyfob's JSON endpoints read of an HTTP request. A web Request is one (Next.js hands those to
 * route handlers); the direct dispatch makes a plain one over Node's request instead
 * (server/protocol-routes.ts): a web Request with its Headers, and the Response for its answer, cost
 * 0.05-0.085 ms per request on Node 24, against 0.003 ms for plain objects (bench/README.md).
 */
export type HttpRequest = {
  readonly method: string;
  /** The absolute URL. */
  readonly url: string;
  readonly headers: { get(name: string): string | null; has(name: string): boolean };
  /** The body as a stream, when it was not read before the request was made (lib/http/bodies.ts). */
  readonly body: ReadableStream<Uint8Array> | null;
};
