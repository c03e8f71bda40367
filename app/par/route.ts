import { pushAuthorizationRequest } from "@/lib/actions/pushed-authorization";
import { endpoint, preflight } from "@/lib/http/endpoint";

export const dynamic = "force-dynamic";

export const POST = endpoint("pushed_authorization_request", pushAuthorizationRequest);
export const OPTIONS = preflight("POST");
