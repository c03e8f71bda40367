import { revokeToken } from "@/lib/actions/revoke";
import { endpoint, preflight } from "@/lib/http/endpoint";

export const dynamic = "force-dynamic";

export const POST = endpoint("revoke", revokeToken);
export const OPTIONS = preflight("POST");
