import { revokeToken } from "@/lib/actions/revoke";
import { endpoint } from "@/lib/http/respond";
import { keyfob } from "@/lib/runtime";

export const dynamic = "force-dynamic";

export const POST = endpoint("revoke", (request, params) => revokeToken(keyfob(), request, params));
