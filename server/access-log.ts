/**
 * The access log: one line per request once its answer is over (method, route, status, duration in
 * ms), under the request's id. The id is the caller's `X-Request-Id` when it is short and plain
 * (a proxy's or the client's, to follow a request across services), else a new one; the answer
 * echoes it, and every line the request writes carries it (lib/log.ts's withRequest). The route is
 * the endpoint's name when one answered (lib/http/serving.ts), else the path: never the query,
 * which may carry codes and tokens.
 */
import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { log, logsInfo, withRequest } from "../lib/log";

export const REQUEST_ID_HEADER = "x-request-id";

/** What a request id may be: up to 64 letters, digits and `._:+=@/-` (UUIDs, proxies' ids, base64). */
const REQUEST_ID = /^[\w.:+=@/-]{1,64}$/;

/** The caller's request id when it is one we can repeat in logs and headers, else a new one. */
export function requestId(request: IncomingMessage): string {
  const given = request.headers[REQUEST_ID_HEADER];
  return typeof given === "string" && REQUEST_ID.test(given) ? given : randomUUID();
}

/** Serves a request under its id (echoed in the answer) and writes its access line when the answer is over. */
export function withAccessLog(request: IncomingMessage, response: ServerResponse, serve: () => void): void {
  const id = requestId(request);
  response.setHeader("X-Request-Id", id);
  withRequest(id, (served) => {
    if (logsInfo()) {
      const started = performance.now();
      response.once("close", () => {
        const url = request.url ?? "/";
        const query = url.indexOf("?");
        // Outside the request's context (a socket's event): its id given here.
        log.info("request", {
          request_id: id,
          method: request.method,
          route: served.route ?? (query < 0 ? url : url.slice(0, query)).slice(0, 200),
          status: response.statusCode,
          ms: Math.round(performance.now() - started),
          ...(response.writableFinished ? {} : { aborted: true }),
        });
      });
    }
    serve();
  });
}
