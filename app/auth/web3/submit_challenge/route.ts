import { submitChallenge } from "@/lib/actions/submit-challenge";
import { endpoint, preflight } from "@/lib/http/endpoint";

export const dynamic = "force-dynamic";

export const POST = endpoint("submit_challenge", (k, request, params, caller) => submitChallenge(k, request, params, caller));
export const OPTIONS = preflight("POST");
