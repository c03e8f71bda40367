import { submitChallenge } from "@/lib/actions/submit-challenge";
import { endpoint } from "@/lib/http/respond";
import { keyfob } from "@/lib/runtime";

export const dynamic = "force-dynamic";

export const POST = endpoint("submit_challenge", (_, params) => submitChallenge(keyfob(), params), { audit: () => keyfob().audit });
