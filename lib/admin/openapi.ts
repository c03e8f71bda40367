import { z } from "zod";
import { ADMIN_TOKEN_TTL } from "../actions/client-credentials";
import { API_BASE, requiredScope, ROUTES } from "./api";
import { ERROR, RESPONSES } from "./api-schemas";
import { changeInput } from "./changes";
import { SIGNING_ALGS } from "../store/contract";
import { MANAGEMENT_SCOPES } from "./scopes";

/**
 * The OpenAPI 3.1 document of the management API, built from the route table (lib/admin/api.ts),
 * the changes' zod inputs (lib/admin/changes.ts) and the answers' zod schemas
 * (lib/admin/api-schemas.ts), so it describes exactly what is validated and what is answered.
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
  requirePushedAuthorizationRequests: {
    type: "boolean",
    description: "authorization requests only through PAR (RFC 9126): /auth refuses any without a pushed request_uri",
  },
  refreshTokensAllowed: { type: "boolean", description: "may get refresh tokens (offline_access)" },
  requireConsent: {
    type: "boolean",
    description:
      "a third-party client: the hosted login asks the user's consent to scopes not granted it yet; off by default (first-party)",
  },
  deviceFlow: { type: "boolean", description: "may use the device authorization grant (RFC 8628)" },
  deviceFlowOfflineAccess: {
    type: "boolean",
    description: "its device grants may carry offline_access (a refresh token), with refreshTokensAllowed too; off by default",
  },
  tokenExchange: {
    type: "boolean",
    description: "may exchange its access tokens for vehicle tokens (RFC 8693 token exchange); off by default",
  },
  managementApi: { type: "boolean", description: "may get management API tokens with client_credentials (confidential clients only)" },
  managementScopes: {
    type: "array",
    items: { enum: Object.keys(MANAGEMENT_SCOPES) },
    minItems: 1,
    uniqueItems: true,
    description: "the management API scopes the client may get (keyfob:admin holds them all); none until an admin chooses them",
  },
  idTokenSignedResponseAlg: {
    enum: [...SIGNING_ALGS],
    description:
      "the alg its ID, access and logout tokens are signed with (RFC 7591 id_token_signed_response_alg): PS256 or ES256 for FAPI 2.0; RS256 by default",
  },
  dpopBoundAccessTokens: {
    type: "boolean",
    description: "token requests must carry a DPoP proof (RFC 9449 5.2): its access tokens are always bound to a key",
  },
  resources: {
    type: "array",
    items: { type: "string", format: "uri", maxLength: 2000 },
    maxItems: 50,
    description:
      "the resource servers the client may get access tokens for (RFC 8707 resource indicators): absolute URIs without a fragment; a token asked for one has it as aud (RFC 9068); replaces the list, empty: none",
  },
  expiresAt: { type: "string", format: "date-time", description: "ISO 8601; absent: never expires" },
  logoUrl: { type: ["string", "null"], maxLength: 2000, description: "https URL; empty or null: no logo" },
  backchannelLogoutUri: {
    type: ["string", "null"],
    maxLength: 2000,
    description:
      "where logout tokens are POSTed (Back-Channel Logout 1.0): https (http on localhost only under an http issuer), on a public host unless the operator allows other networks; empty or null: none",
  },
  backchannelLogoutSessionRequired: { type: "boolean", description: "the client needs sid in ID and logout tokens" },
  tokenEndpointAuthMethod: {
    enum: ["private_key_jwt", "client_secret_jwt", null],
    description:
      "client assertions (RFC 7523) instead of a secret; absent or null: the client's secret (none for a public client). client_secret_jwt works once the secret is rotated after it is set",
  },
  jwks: {
    type: ["object", "null"],
    description: "private_key_jwt: the client's public keys, a JWK Set; or jwksUri (a license's signers need neither)",
  },
  jwksUri: {
    type: ["string", "null"],
    maxLength: 2000,
    description: "private_key_jwt: where Keyfob fetches the client's JWK Set, on the rules of backchannelLogoutUri",
  },
};

/** A zod schema as the JSON Schema (2020-12, OpenAPI 3.1's dialect) of what travels on the wire. */
function jsonSchema(schema: z.ZodType): Record<string, unknown> {
  const { $schema: _, ...rest } = z.toJSONSchema(schema, { io: "input", unrepresentable: "any" }) as Record<string, unknown>;
  return rest;
}

/** A query parameter: page numbers are integers from 1, the rest text. */
const querySchema = (name: string) => (name === "page" ? { type: "integer", minimum: 1, default: 1, examples: [1] } : { type: "string" });

function bodySchema(route: (typeof ROUTES)[number]): Record<string, unknown> | undefined {
  if (!route.change || !route.body?.length) return undefined;
  const schema = jsonSchema(changeInput(route.change)) as {
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
      ...(route.change && { description: `Runs the admin change \`${route.change}\` (validated and audited like the dashboard's).` }),
      parameters: [
        ...pathParams.map((name) => ({ name, in: "path", required: true, schema: { type: "string" }, description: "percent-encoded" })),
        ...Object.entries(route.query ?? {}).map(([name, description]) => ({
          name,
          in: "query",
          required: false,
          schema: querySchema(name),
          description,
        })),
      ],
      ...(body && { requestBody: { required: true, content: { "application/json": { schema: body } } } }),
      responses: {
        [String(route.status ?? 200)]: {
          description: route.status === 204 ? "done, no content" : "done",
          ...(route.status === 204
            ? {}
            : route.response
              ? { content: { "application/json": { schema: jsonSchema(RESPONSES[route.response]) } } }
              : { content: { "text/csv": { schema: { type: "string" } } } }),
        },
        400: { $ref: "#/components/responses/Error" },
        401: { $ref: "#/components/responses/Error" },
        403: { $ref: "#/components/responses/Error" },
        404: { $ref: "#/components/responses/Error" },
        ...(body && { 413: { $ref: "#/components/responses/Error" }, 415: { $ref: "#/components/responses/Error" } }),
        503: { $ref: "#/components/responses/Unavailable" },
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
        `A caller never gives a scope it lacks: allowing a client the management API or a scope of it, replacing or ending the overlap of a management client's secret, ` +
        `and blocking, deleting or revoking what an admin's account holds need keyfob:admin (403 insufficient_scope otherwise). ` +
        `Tokens live ${ADMIN_TOKEN_TTL / 60} minutes. Changes are validated and audited like the dashboard's; the audit log names the client as api:<client_id>.`,
    },
    servers: [{ url: `${issuer}${API_BASE}` }],
    components: {
      securitySchemes: {
        adminToken: { type: "oauth2", flows: { clientCredentials: { tokenUrl: `${issuer}/token`, scopes: MANAGEMENT_SCOPES } } },
      },
      schemas: { Error: jsonSchema(ERROR) },
      responses: {
        Error: { description: "Keyfob's error shape", content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } } },
        Unavailable: {
          description:
            "This instance cannot serve the request just now (the database cannot be reached; for a key rotation or revocation, its KEYFOB_SECRET cannot open the stored keys): try again after Retry-After seconds",
          headers: { "Retry-After": { schema: { type: "integer" } } },
          content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } },
        },
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
