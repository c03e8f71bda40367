import { discoveryResponse } from "@/lib/http/metadata";
import { keyfob } from "@/lib/runtime";

export const dynamic = "force-dynamic";

export function GET() {
  return discoveryResponse(keyfob().config.issuerUrl);
}
