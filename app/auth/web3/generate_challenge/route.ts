import { generateChallenge } from "@/lib/actions/generate-challenge";
import { clientIp } from "@/lib/http/client-ip";
import { endpoint, preflight } from "@/lib/http/endpoint";

export const dynamic = "force-dynamic";

export const POST = endpoint("generate_challenge", (k, request, params) => generateChallenge(k, params, { ip: clientIp(request) }));
export const GET = POST;
export const OPTIONS = preflight("GET, POST");
