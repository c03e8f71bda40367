import { generateChallenge } from "@/lib/actions/generate-challenge";
import { endpoint } from "@/lib/http/respond";
import { readParams } from "@/lib/oauth/params";
import { keyfob } from "@/lib/runtime";

export const dynamic = "force-dynamic";

export const POST = endpoint("generate_challenge", async (request) => generateChallenge(keyfob(), await readParams(request)));
export const GET = POST;
