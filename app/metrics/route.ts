/**
 * GET /metrics: Prometheus metrics on the main port, only with METRICS_TOKEN as a bearer token
 * (404 when no token is configured; METRICS_PORT serves them on a port of its own instead).
 */
import { endpoint } from "@/lib/http/endpoint";
import { metricsRequestAllowed, metricsResponse } from "@/lib/http/metrics";

export const dynamic = "force-dynamic";

export const GET = endpoint("metrics", {
  answer: (k, request) => {
    const { metricsToken } = k.config;
    if (!metricsToken) return { response: new Response("Not Found", { status: 404 }), refused: "not_found" };
    if (!metricsRequestAllowed(request, metricsToken)) {
      const headers = { "WWW-Authenticate": 'Bearer realm="metrics"' };
      return { response: new Response("Unauthorized", { status: 401, headers }), refused: "invalid_token" };
    }
    return metricsResponse();
  },
});
