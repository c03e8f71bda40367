import { exchangeCode } from "@/lib/actions/exchange-code";
import { endpoint } from "@/lib/http/respond";
import { readParams } from "@/lib/oauth/params";
import { keyfob } from "@/lib/runtime";

export const dynamic = "force-dynamic";

export const POST = endpoint("token", async (request) => exchangeCode(keyfob(), request, await readParams(request)));
