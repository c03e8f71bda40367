import type { NextRequest } from "next/server";
import { handlers } from "@/app/_upstream/auth";
import { endpoint, otherMethods } from "@/lib/http/endpoint";

export const dynamic = "force-dynamic";

export const { PUT, PATCH, DELETE, OPTIONS } = otherMethods("GET", "POST");

/** Auth.js's own endpoints (Google and Apple sign-in steps), counted and logged like every other. */
export const GET = endpoint("upstream_auth", { answer: (_, request) => handlers.GET(request as NextRequest) });
export const POST = endpoint("upstream_auth", { answer: (_, request) => handlers.POST(request as NextRequest) });
