import { introspectToken } from "@/lib/actions/introspect";
import { endpoint } from "@/lib/http/respond";
import { keyfob } from "@/lib/runtime";

export const dynamic = "force-dynamic";

export const POST = endpoint("introspect", (request, params) => introspectToken(keyfob(), request, params));
