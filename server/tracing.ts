/**
 * Loads OpenTelemetry's SDK when OTEL_EXPORTER_OTLP_ENDPOINT (or _TRACES_ENDPOINT) is set, and only
 * then: spans go in batches to that OTLP/HTTP endpoint as JSON (the standard OTEL_* variables
 * apply: OTEL_SERVICE_NAME, OTEL_EXPORTER_OTLP_HEADERS, OTEL_BSP_SCHEDULE_DELAY, …), W3C
 * `traceparent` is honoured, and each PostgreSQL statement run within a traced request gets a span
 * (its SQL with placeholders, never the values). lib/tracing.ts makes the other spans.
 */
import type { Attributes } from "@opentelemetry/api";
import pg from "pg";
import packageJson from "../package.json" with { type: "json" };
import { enableTracing, type Tracing } from "../lib/tracing";

let shutdown: (() => Promise<void>) | undefined;

export async function startTracing(env: Record<string, string | undefined> = process.env): Promise<void> {
  if (shutdown || !(env.OTEL_EXPORTER_OTLP_ENDPOINT || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT)) return;
  const [api, { NodeTracerProvider, BatchSpanProcessor }, { OTLPTraceExporter }, { resourceFromAttributes }] = await Promise.all([
    import("@opentelemetry/api"),
    import("@opentelemetry/sdk-trace-node"),
    import("@opentelemetry/exporter-trace-otlp-http"),
    import("@opentelemetry/resources"),
  ]);
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ "service.name": env.OTEL_SERVICE_NAME || "keyfob", "service.version": packageJson.version }),
    spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter())],
  });
  provider.register(); // the context manager (AsyncLocalStorage) and W3C trace context propagation
  const tracing = { api, tracer: api.trace.getTracer("keyfob", packageJson.version) };
  traceStatements(tracing);
  enableTracing(tracing);
  shutdown = () => provider.shutdown();
}

/** Sends the spans not yet exported (at shutdown). */
export async function stopTracing(): Promise<void> {
  await shutdown?.();
}

/**
 * A span per statement on node-postgres's Client (the pool's and Prisma's adapter's connections
 * alike), within a traced request only: housekeeping's statements start no traces of their own.
 */
function traceStatements({ api, tracer }: Tracing): void {
  const query = pg.Client.prototype.query as (this: pg.Client, ...args: unknown[]) => unknown;
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    const [config] = args;
    const text = typeof config === "string" ? config : (config as { text?: unknown } | undefined)?.text;
    if (typeof text !== "string" || !api.trace.getActiveSpan()) return query.apply(this, args);
    const operation = /^\s*(\w+)/.exec(text)?.[1]?.toUpperCase() ?? "SQL"; // WITH for a statement of CTEs
    const attributes: Attributes = { "db.system.name": "postgresql", "db.operation.name": operation, "db.query.text": text.slice(0, 2000) };
    return tracer.startActiveSpan(`db ${operation}`, { kind: api.SpanKind.CLIENT, attributes }, (span) => {
      const end = (error: { code?: string; name?: string } | null | undefined) => {
        if (error) span.setStatus({ code: api.SpanStatusCode.ERROR, message: error.code ?? error.name });
        span.end();
      };
      // The pool's own query() passes a callback; Prisma's adapter takes the promise.
      const last = args.length - 1;
      const callback = args[last];
      if (typeof callback === "function") {
        args[last] = (error: Error | null, result: unknown) => {
          end(error);
          callback(error, result);
        };
        return query.apply(this, args);
      }
      return (query.apply(this, args) as Promise<unknown>).then(
        (result) => {
          end(undefined);
          return result;
        },
        (error) => {
          end(error);
          throw error;
        },
      );
    });
  } as typeof pg.Client.prototype.query;
}
