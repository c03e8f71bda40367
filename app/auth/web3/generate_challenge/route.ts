import { generateChallenge } from "@/lib/actions/generate-challenge";
import { endpoint } from "@/lib/http/respond";
import { keyfob } from "@/lib/runtime";

export const dynamic = "force-dynamic";

export const POST = endpoint("generate_challenge", (_, params) => generateChallenge(keyfob(), params));
export const GET = POST;
