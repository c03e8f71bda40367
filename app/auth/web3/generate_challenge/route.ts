import { generateChallenge } from "@/lib/actions/generate-challenge";
import { endpoint, preflight } from "@/lib/http/endpoint";

export const dynamic = "force-dynamic";

export const POST = endpoint("generate_challenge", (k, _, params) => generateChallenge(k, params));
export const GET = POST;
export const OPTIONS = preflight("GET, POST");
