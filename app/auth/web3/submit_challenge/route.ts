import { submitChallenge } from "@/lib/actions/submit-challenge";
import { endpoint } from "@/lib/http/respond";
import { readParams } from "@/lib/oauth/params";
import { keyfob } from "@/lib/runtime";

export const dynamic = "force-dynamic";

export const POST = endpoint("submit_challenge", async (request) => submitChallenge(keyfob(), await readParams(request)));
