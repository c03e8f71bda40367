import { timingSafeEqual, createHash } from "node:crypto";
import { metricsContentType, renderMetrics } from "../metrics";
import type { HttpRequest } from "./request";
import type { Answer, Refused } from "./respond";

/**
 * GET /metrics on the server's port: only with METRICS_TOKEN set, and for a request carrying it as
 * its bearer token (compared in constant time); METRICS_PORT serves them apart, without a token.
 */
export async function metricsAnswer(token: string | undefined, request: HttpRequest): Promise<Answer | Refused> {
  if (!token) return { answer: { status: 404, headers: { "Content-Type": "text/plain" }, body: "Not Found" }, refused: "not_found" };
  const presented = /^Bearer\s+(\S+)$/i.exec(request.headers.get("authorization") ?? "")?.[1] ?? "";
  const digest = (value: string) => createHash("sha256").update(value).digest();
  if (!timingSafeEqual(digest(presented), digest(token))) {
    const headers = { "Content-Type": "text/plain", "WWW-Authenticate": 'Bearer realm="metrics"' };
    return { answer: { status: 401, headers, body: "Unauthorized" }, refused: "invalid_token" };
  }
  return allMetrics();
}

/** Every metric, in Prometheus's text format. */
export async function allMetrics(): Promise<Answer> {
  return { status: 200, headers: { "Content-Type": metricsContentType, "Cache-Control": "no-store" }, body: await renderMetrics() };
}
