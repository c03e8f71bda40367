/**
 * What Keyfob's endpoints read of an HTTP request. Keyfob's server makes one for the protocol
 * routes (lib/http/routes.ts) over Node's request, its body already read as bytes; a web Request,
 * which Next.js hands to the page routes in app/, is one too, its body a stream.
 */
export type HttpRequest = {
  readonly method: string;
  /** The absolute URL. */
  readonly url: string;
  readonly headers: { get(name: string): string | null; has(name: string): boolean };
  /**
   * The body: the bytes the server read (at most one byte past MAX_BODY_BYTES, none when it declared
   * more), or a web Request's stream.
   */
  readonly body: Uint8Array | ReadableStream<Uint8Array> | null;
};
