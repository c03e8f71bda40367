import { token } from "@/lib/actions/token";
import { endpoint, preflight } from "@/lib/http/endpoint";

export const dynamic = "force-dynamic";

export const POST = endpoint("token", token);
export const OPTIONS = preflight("POST");
