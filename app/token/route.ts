import { exchangeCode } from "@/lib/actions/exchange-code";
import { endpoint, preflight } from "@/lib/http/endpoint";

export const dynamic = "force-dynamic";

export const POST = endpoint("token", exchangeCode);
export const OPTIONS = preflight("POST");
