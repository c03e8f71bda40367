import { endpoint } from "@/lib/http/endpoint";
import { discoveryResponse } from "@/lib/http/metadata";

export const dynamic = "force-dynamic";

export const GET = endpoint("discovery", { answer: (k) => discoveryResponse(k.config.issuerUrl) });
