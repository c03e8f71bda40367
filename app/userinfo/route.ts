import { userinfo } from "@/lib/actions/userinfo";
import { endpoint } from "@/lib/http/respond";
import { keyfob } from "@/lib/runtime";

export const dynamic = "force-dynamic";

export const GET = endpoint("userinfo", (request) => userinfo(keyfob(), request));
export const POST = GET;
