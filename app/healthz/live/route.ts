/** GET /healthz/live: the process answers (liveness probe). Touches nothing else. */
import { endpoint } from "@/lib/http/endpoint";

export const dynamic = "force-dynamic";

export const GET = endpoint("health_live", {
  answer: () => Response.json({ status: "ok" }, { headers: { "Cache-Control": "no-store" } }),
});
