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
import type { Span } from "@opentelemetry/api";
import { log, logsInfo, withRequest } from "../lib/log";
import { type Tracing, tracing } from "../lib/tracing";

export const REQUEST_ID_HEADER = "x-request-id";

/** What a request id may be: up to 64 letters, digits and `._:+=@/-` (UUIDs, proxies' ids, base64). */
const REQUEST_ID = /^[\w.:+=@/-]{1,64}$/;

/** The caller's request id when it is one we can repeat in logs and headers, else a new one. */
export function requestId(request: IncomingMessage): string {
  const given = request.headers[REQUEST_ID_HEADER];
  return typeof given === "string" && REQUEST_ID.test(given) ? given : randomUUID();
}

/**
 * Serves a request under its id (echoed in the answer) and, when its answer is over, writes its
 * access line and ends its span (traces on: a child of the caller's `traceparent`, if any).
 */
export function withAccessLog(request: IncomingMessage, response: ServerResponse, serve: () => void): void {
  const id = requestId(request);
  response.setHeader("X-Request-Id", id);
  const logs = logsInfo();
  const traces = tracing();
  if (!logs && !traces) {
    withRequest(id, serve);
    return;
  }
  const started = performance.now();
  const span = traces && requestSpan(traces, request);
  withRequest(id, (served) => {
    response.once("close", () => {
      const url = request.url ?? "/";
      const query = url.indexOf("?");
      const route = served.route ?? (query < 0 ? url : url.slice(0, query)).slice(0, 200);
      const status = response.statusCode;
      if (span) endRequestSpan(traces, span, { method: request.method ?? "GET", route, status, error: served.error });
      // Outside the request's context (a socket's event): its id given here.
      if (logs)
        log.info("request", {
          request_id: id,
          method: request.method,
          route,
          status,
          ms: Math.round(performance.now() - started),
          ...(response.writableFinished ? {} : { aborted: true }),
        });
    });
    if (span) traces.api.context.with(traces.api.trace.setSpan(traces.api.context.active(), span), serve);
    else serve();
  });
}

/** The request's span, a child of the span its `traceparent` names (W3C trace context). */
function requestSpan({ api, tracer }: Tracing, request: IncomingMessage): Span {
  const parent = api.propagation.extract(api.ROOT_CONTEXT, request.headers);
  return tracer.startSpan(
    request.method ?? "GET",
    { kind: api.SpanKind.SERVER, attributes: { "http.request.method": request.method ?? "GET" } },
    parent,
  );
}

/** Names the span by its endpoint and records the outcome: the status and a refusal's OAuth error code. */
function endRequestSpan({ api }: Tracing, span: Span, outcome: { method: string; route: string; status: number; error?: string }): void {
  span.updateName(`${outcome.method} ${outcome.route}`);
  span.setAttributes({
    "http.route": outcome.route,
    "http.response.status_code": outcome.status,
    ...(outcome.error && { "oauth.error": outcome.error }),
  });
  if (outcome.status >= 500) span.setStatus({ code: api.SpanStatusCode.ERROR });
  span.end();
}
