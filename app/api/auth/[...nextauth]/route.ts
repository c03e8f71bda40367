import type { NextRequest } from "next/server";
import { handlers } from "@/app/_upstream/auth";
import { endpoint } from "@/lib/http/endpoint";

export const dynamic = "force-dynamic";

/** Auth.js's own endpoints (Google and Apple sign-in steps), counted and logged like every other. */
export const GET = endpoint("upstream_auth", { answer: (_, request) => handlers.GET(request as NextRequest) });
export const POST = endpoint("upstream_auth", { answer: (_, request) => handlers.POST(request as NextRequest) });
