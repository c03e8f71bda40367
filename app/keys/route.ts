import { jwksResponse } from "@/lib/http/metadata";
import { keyfob } from "@/lib/runtime";

export const dynamic = "force-dynamic";

export function GET() {
  return jwksResponse(keyfob().keys);
}
