import { userinfo } from "@/lib/actions/userinfo";
import { endpoint, preflight } from "@/lib/http/endpoint";

export const dynamic = "force-dynamic";

export const GET = endpoint("userinfo", userinfo);
export const POST = GET;
export const OPTIONS = preflight("GET, POST");
