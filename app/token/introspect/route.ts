import { introspectToken } from "@/lib/actions/introspect";
import { endpoint } from "@/lib/http/respond";
import { readParams } from "@/lib/oauth/params";
import { keyfob } from "@/lib/runtime";

export const dynamic = "force-dynamic";

export const POST = endpoint("introspect", async (request) => introspectToken(keyfob(), request, await readParams(request)));
