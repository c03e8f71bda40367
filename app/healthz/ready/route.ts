/** GET /healthz/ready: 200 when this instance can serve (database reachable, signing keys loaded), else 503. */
import { endpoint } from "@/lib/http/endpoint";
import { readiness } from "@/lib/health";
import { isDraining } from "@/lib/runtime";

export const dynamic = "force-dynamic";

export const GET = endpoint("health_ready", {
  answer: async (k) => {
    const { ready, checks } = await readiness(k, isDraining());
    const response = Response.json(
      { status: ready ? "ok" : "unavailable", checks },
      { status: ready ? 200 : 503, headers: { "Cache-Control": "no-store" } },
    );
    return ready ? response : { response, refused: "temporarily_unavailable" };
  },
});
