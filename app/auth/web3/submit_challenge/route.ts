import { submitChallenge } from "@/lib/actions/submit-challenge";
import { endpoint, preflight } from "@/lib/http/endpoint";

export const dynamic = "force-dynamic";

export const POST = endpoint("submit_challenge", (k, _, params) => submitChallenge(k, params));
export const OPTIONS = preflight("POST");
