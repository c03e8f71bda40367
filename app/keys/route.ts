import { endpoint } from "@/lib/http/endpoint";
import { jwksResponse } from "@/lib/http/metadata";

export const dynamic = "force-dynamic";

export const GET = endpoint("jwks", { answer: (k) => jwksResponse(k.keys) });
