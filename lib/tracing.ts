/**
 * Traces (OpenTelemetry), on when OTEL_EXPORTER_OTLP_ENDPOINT is set: server/tracing.ts then loads
 * the SDK and hands its tracer here. Off, inSpan runs its work and nothing else (no SDK is loaded,
 * no API is called). Spans: one per request (server/access-log.ts), and within it PostgreSQL
 * statements (server/tracing.ts), chain RPC calls (tracedHttp) and token signing.
 */
import type * as Api from "@opentelemetry/api";
import { http, type HttpTransportConfig, type Transport } from "viem";

export type Tracing = { api: typeof Api; tracer: Api.Tracer };

/** One tracer per process: Next.js bundles a copy of this module into each route. */
const SHARED = Symbol.for("keyfob.tracing");
const global = globalThis as { [SHARED]?: Tracing };

/** The tracer, when traces are on. */
export const tracing = (): Tracing | undefined => global[SHARED];

export function enableTracing(tracing: Tracing): void {
  global[SHARED] = tracing;
}

/** `work` as a span (a child of the active one); a failure marks it, with the error's name only. */
export function inSpan<T>(
  name: string,
  attributes: Api.Attributes,
  work: () => Promise<T>,
  kind: "client" | "internal" = "internal",
): Promise<T> {
  const on = global[SHARED];
  if (!on) return work();
  const { api, tracer } = on;
  const spanKind = kind === "client" ? api.SpanKind.CLIENT : api.SpanKind.INTERNAL;
  return tracer.startActiveSpan(name, { kind: spanKind, attributes }, async (span) => {
    try {
      return await work();
    } catch (error) {
      span.setStatus({ code: api.SpanStatusCode.ERROR, message: error instanceof Error ? error.name : "error" });
      throw error;
    } finally {
      span.end();
    }
  });
}

/**
 * viem's http transport with a span per JSON-RPC call, named by its method. The URL is not
 * recorded (providers' URLs carry API keys): only its host.
 */
export function tracedHttp(url: string, config: HttpTransportConfig): Transport {
  const base = http(url, config);
  const host = URL.parse(url)?.host ?? "";
  return (options) => {
    const transport = base(options);
    return {
      ...transport,
      request: (args, requestOptions) =>
        inSpan(
          `rpc ${args.method}`,
          { "rpc.system": "jsonrpc", "rpc.method": args.method, "server.address": host },
          () => transport.request(args, requestOptions),
          "client",
        ),
    } as ReturnType<Transport>;
  };
}
