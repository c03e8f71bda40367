import { submitChallenge } from "@/lib/actions/submit-challenge";
import { endpoint, preflight } from "@/lib/http/endpoint";

export const dynamic = "force-dynamic";

export const POST = endpoint("submit_challenge", (k, _, params, caller) => submitChallenge(k, params, caller));
export const OPTIONS = preflight("POST");
