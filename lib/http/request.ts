import type { Caller } from "../audit";
import type { AuthenticatedClient } from "../oauth/client-auth";
import type { ReadParams } from "../oauth/params";

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

/**
 * A protocol request as its action gets it, read once before the action runs (as Dex's handlers
 * get a parsed request): its HTTP request (headers: Authorization, DPoP, Origin), its parameters
 * (the query and the form body, each checked: lib/oauth/params.ts), who calls, and the client it
 * authenticates as, authenticated once, when first asked, for the limits and the action alike.
 */
export type ProtocolRequest = {
  readonly http: HttpRequest;
  readonly params: ReadParams;
  readonly caller: Caller;
  /** The client (RFC 6749 2.3), or invalid_client; the same answer every time it is asked. */
  client(): Promise<AuthenticatedClient>;
};
