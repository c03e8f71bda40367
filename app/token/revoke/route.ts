import { revokeToken } from "@/lib/actions/revoke";
import { endpoint } from "@/lib/http/respond";
import { readParams } from "@/lib/oauth/params";
import { keyfob } from "@/lib/runtime";

export const dynamic = "force-dynamic";

export const POST = endpoint("revoke", async (request) => revokeToken(keyfob(), request, await readParams(request)));
