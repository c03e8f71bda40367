import { clientCredentials } from "@/lib/actions/client-credentials";
import { exchangeCode } from "@/lib/actions/exchange-code";
import { refreshToken } from "@/lib/actions/refresh-token";
import { endpoint, preflight } from "@/lib/http/endpoint";
import type { Keyfob } from "@/lib/keyfob";
import type { Params } from "@/lib/oauth/params";

export const dynamic = "force-dynamic";

/** One action per grant type; anything but refresh_token is the code exchange's to accept or refuse. */
const token = (keyfob: Keyfob, request: Request, params: Params) =>
  params.get("grant_type") === "client_credentials" ? clientCredentials(keyfob, request, params) :
  params.get("grant_type") === "refresh_token" ? refreshToken(keyfob, request, params) : exchangeCode(keyfob, request, params);

export const POST = endpoint("token", token);
export const OPTIONS = preflight("POST");
