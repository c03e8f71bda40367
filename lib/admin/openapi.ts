import { z } from "zod";
import { ADMIN_TOKEN_TTL } from "../actions/client-credentials";
import { API_BASE, requiredScope, ROUTES } from "./api";
import { actionInput } from "./actions";
import { MANAGEMENT_SCOPES } from "./scopes";

/**
 * The OpenAPI 3.1 document of the management API, built from the route table (lib/admin/api.ts)
 * and the actions' zod inputs (lib/admin/actions.ts), so it describes exactly what is validated.
 */

/** How the API takes values that forms send as text: flags as booleans, dates as ISO 8601, an optional logo as null. */
const FIELD_SCHEMAS: Record<string, Record<string, unknown>> = {
  enabled: { type: "boolean" },
  overlapSeconds: {
    type: "integer",
    minimum: 0,
    maximum: 2592000,
    description: "how long the replaced secret stays valid, in seconds (0 or absent: it stops at once)",
  },
  requirePkce: { type: "boolean", description: "PKCE for a confidential client too (public clients always need it)" },
  resourceServer: { type: "boolean", description: "may introspect other clients' tokens" },
  refreshTokensAllowed: { type: "boolean", description: "may get refresh tokens (offline_access)" },
  managementApi: { type: "boolean", description: "may get management API tokens with client_credentials (confidential clients only)" },
  managementScopes: {
    type: "array",
    items: { enum: Object.keys(MANAGEMENT_SCOPES) },
    minItems: 1,
    uniqueItems: true,
    description: "the management API scopes the client may get (keyfob:admin holds them all)",
  },
  expiresAt: { type: "string", format: "date-time", description: "ISO 8601; absent: never expires" },
  logoUrl: { type: ["string", "null"], maxLength: 2000, description: "https URL; empty or null: no logo" },
};

const ERROR = {
  type: "object",
  required: ["error", "error_description", "status", "message"],
  properties: {
    error: { type: "string", examples: ["invalid_request", "invalid_token", "insufficient_scope", "access_denied", "not_found"] },
    error_description: { type: "string" },
    status: { type: "integer" },
    message: { type: "string", description: "the same text as error_description (the platform SDKs read it)" },
    field_errors: { type: "object", additionalProperties: { type: "string" }, description: "invalid input: the problem of each field" },
  },
};

function bodySchema(route: (typeof ROUTES)[number]): Record<string, unknown> | undefined {
  if (!route.action || !route.body?.length) return undefined;
  const schema = z.toJSONSchema(actionInput(route.action), { io: "input", unrepresentable: "any" }) as {
    properties?: Record<string, unknown>;
    required?: string[];
  };
  const properties = Object.fromEntries(route.body.map((field) => [field, FIELD_SCHEMAS[field] ?? schema.properties?.[field] ?? {}]));
  const required = (schema.required ?? []).filter((field) => route.body!.includes(field));
  return { type: "object", properties, ...(required.length && { required }), additionalProperties: false };
}

export function openApiDocument(issuer: string) {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of ROUTES) {
    const pathParams = [...route.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
    const body = bodySchema(route);
    const operation = {
      operationId: `${route.method.toLowerCase()}${route.path.replace(/\{(\w+)\}/g, "By-$1").replace(/[^A-Za-z0-9]+(.)?/g, (_, c: string | undefined) => (c ? c.toUpperCase() : ""))}`,
      summary: route.summary,
      tags: [route.tag],
      security: [{ adminToken: [requiredScope(route)] }],
      ...(route.action && { description: `Runs the admin action \`${route.action}\` (validated and audited like the dashboard's).` }),
      parameters: [
        ...pathParams.map((name) => ({ name, in: "path", required: true, schema: { type: "string" }, description: "percent-encoded" })),
        ...Object.entries(route.query ?? {}).map(([name, description]) => ({
          name,
          in: "query",
          required: false,
          schema: { type: "string" },
          description,
        })),
      ],
      ...(body && { requestBody: { required: true, content: { "application/json": { schema: body } } } }),
      responses: {
        [String(route.status ?? 200)]: {
          description: route.status === 204 ? "done, no content" : "done",
          ...(route.status === 204
            ? {}
            : route.path === "/audit.csv"
              ? { content: { "text/csv": { schema: { type: "string" } } } }
              : { content: { "application/json": { schema: { type: "object" } } } }),
        },
        400: { $ref: "#/components/responses/Error" },
        401: { $ref: "#/components/responses/Error" },
        403: { $ref: "#/components/responses/Error" },
        404: { $ref: "#/components/responses/Error" },
      },
    };
    paths[route.path] ??= {};
    paths[route.path][route.method.toLowerCase()] = operation;
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "Keyfob management API",
      version: "1",
      description:
        `Every dashboard operation as JSON. Authenticate with an access token that Keyfob issues to a confidential client an admin allowed the management API: ` +
        `POST ${issuer}/token with grant_type=client_credentials and the scopes it needs, of those an admin allowed the client (client_secret_basic or client_secret_post): ` +
        `keyfob:read for every read, keyfob:clients, keyfob:accounts or keyfob:keys for changes, and keyfob:admin for everything, granting admins included. ` +
        `Tokens live ${ADMIN_TOKEN_TTL / 60} minutes. Changes are validated and audited like the dashboard's; the audit log names the client as api:<client_id>.`,
    },
    servers: [{ url: `${issuer}${API_BASE}` }],
    components: {
      securitySchemes: {
        adminToken: { type: "oauth2", flows: { clientCredentials: { tokenUrl: `${issuer}/token`, scopes: MANAGEMENT_SCOPES } } },
      },
      schemas: { Error: ERROR },
      responses: {
        Error: { description: "Keyfob's error shape", content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } } },
      },
    },
    paths: {
      "/openapi.json": {
        get: { operationId: "getOpenapi", summary: "This document", security: [], responses: { 200: { description: "OpenAPI 3.1" } } },
      },
      ...paths,
    },
  };
}
