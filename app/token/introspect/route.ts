import { introspectToken } from "@/lib/actions/introspect";
import { endpoint } from "@/lib/http/endpoint";

export const dynamic = "force-dynamic";

/** Server-to-server only (resource servers): no CORS. */
export const POST = endpoint("introspect", introspectToken);
