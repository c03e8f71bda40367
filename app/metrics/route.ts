/**
 * GET /metrics: Prometheus metrics on the main port, only with METRICS_TOKEN as a bearer token
 * (404 when no token is configured; METRICS_PORT serves them on a port of its own instead).
 */
import { metricsRequestAllowed, metricsResponse } from "@/lib/http/metrics";
import { keyfob } from "@/lib/runtime";

export const dynamic = "force-dynamic";

export async function GET(request: Request) {
  const { metricsToken } = keyfob().config;
  if (!metricsToken) return new Response("Not Found", { status: 404 });
  if (!metricsRequestAllowed(request, metricsToken)) {
    return new Response("Unauthorized", { status: 401, headers: { "WWW-Authenticate": 'Bearer realm="metrics"' } });
  }
  return metricsResponse();
}
