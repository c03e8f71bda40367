import { openidConfiguration } from "@/lib/discovery";
import { keyfob } from "@/lib/runtime";

export const dynamic = "force-dynamic";

export function GET() {
  return Response.json(openidConfiguration(keyfob().config.issuerUrl), {
    headers: { "Cache-Control": "public, max-age=3600" },
  });
}
