/**
 * The management API, /api/admin/v1/… (lib/admin/api.ts): every dashboard operation as JSON, for
 * a client_credentials access token with the keyfob:admin scope. GET /api/admin/v1/openapi.json
 * describes it.
 */
import { managementApi } from "@/lib/admin/api";
import { openApiDocument } from "@/lib/admin/openapi";
import { endpoint } from "@/lib/http/endpoint";

export const dynamic = "force-dynamic";

const handle = endpoint(
  "admin_api",
  managementApi((k) => openApiDocument(k.config.issuerUrl)),
);

export const GET = handle;
export const POST = handle;
export const PATCH = handle;
export const DELETE = handle;
