import { exchangeCode } from "@/lib/actions/exchange-code";
import { endpoint } from "@/lib/http/respond";
import { keyfob } from "@/lib/runtime";

export const dynamic = "force-dynamic";

export const POST = endpoint("token", (request, params) => exchangeCode(keyfob(), request, params), { audit: () => keyfob().audit });
