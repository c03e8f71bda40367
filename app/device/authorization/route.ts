import { deviceAuthorization } from "@/lib/actions/device-authorization";
import { endpoint, preflight } from "@/lib/http/endpoint";

export const dynamic = "force-dynamic";

export const POST = endpoint("device_authorization", deviceAuthorization);
export const OPTIONS = preflight("POST");
