/** GET /healthz/ready: 200 when this instance can serve (database reachable, signing keys loaded), else 503. */
import { readiness } from "@/lib/health";
import { isDraining, keyfob } from "@/lib/runtime";

export const dynamic = "force-dynamic";

export async function GET() {
  const { ready, checks } = await readiness(keyfob(), isDraining());
  return Response.json(
    { status: ready ? "ok" : "unavailable", checks },
    { status: ready ? 200 : 503, headers: { "Cache-Control": "no-store" } },
  );
}
