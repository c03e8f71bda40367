import { timingSafeEqual, createHash } from "node:crypto";
import { metricsContentType, renderMetrics } from "../metrics";

/** Whether the request carries METRICS_TOKEN as its bearer token (compared in constant time). */
export function metricsRequestAllowed(request: Request, token: string): boolean {
  const presented = /^Bearer\s+(\S+)$/i.exec(request.headers.get("authorization") ?? "")?.[1] ?? "";
  const digest = (value: string) => createHash("sha256").update(value).digest();
  return timingSafeEqual(digest(presented), digest(token));
}

export async function metricsResponse(): Promise<Response> {
  return new Response(await renderMetrics(), { headers: { "Content-Type": metricsContentType, "Cache-Control": "no-store" } });
}
