/**
 * The management API's OpenAPI document (lib/admin/openapi.ts) against the real API: every
 * operation is called through the real route handler with an admin token, and each answer (its
 * status, content type and body) is validated with ajv against what the document says of that
 * operation and status, errors included. Then a TypeScript client is generated from the document
 * with openapi-typescript, and a small script that lists clients with it type-checks (tsc): pages
 * and counts are numbers, and no storage internals (`_count`) appear.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { Ajv2020 } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import { decodeJwt } from "jose";
import openapiTS, { astToString } from "openapi-typescript";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, expect, it } from "vitest";
import { resolveAccount } from "@/lib/accounts/accounts";
import { API_BASE } from "@/lib/admin/api";
import { createClient, rotateClientSecret, updateClient } from "@/lib/clients/registry";
import { recordConsent } from "@/lib/consent/grants";
import { keyfob } from "@/lib/runtime";
import { startSession } from "@/lib/sessions/login-session";
import { ISSUER, registerLicense, requestChallenge, submit } from "./support/flow-a";
import { authorize, FORM, google, registerApp, token as tokenExchange } from "./support/flow-b";
import { route } from "./support/routes";

const DELETE = route("/api/admin/v1");
const GET = route("/api/admin/v1");
const PATCH = route("/api/admin/v1");
const POST = route("/api/admin/v1");
const tokenRoute = route("/token");

const ROOT = path.resolve(import.meta.dirname, "..");
const handlers = { GET, POST, PATCH, DELETE };
type Method = keyof typeof handlers;
type Operation = { responses: Record<string, { $ref?: string; content?: Record<string, { schema: unknown }> }> };
type Document = {
  paths: Record<string, Record<string, Operation>>;
  components: { responses: Record<string, Operation["responses"][string]> };
};

let document: Document;
let adminToken: string;
const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats.default(ajv);
/** Every operation answered with a success, as "METHOD /path" of the document. */
const succeeded = new Set<string>();
let dir: string;

beforeAll(async () => {
  const response = await GET(new Request(`${ISSUER}${API_BASE}/openapi.json`));
  expect(response.status).toBe(200);
  document = await response.json();
  ajv.addSchema(document, "openapi");

  const caller = await createClient(keyfob().store, { name: "OpenAPI check" });
  const secret = await rotateClientSecret(keyfob(), caller.id);
  await updateClient(keyfob().store, caller.id, { managementApi: true, managementScopes: ["keyfob:admin"] });
  const granted = await tokenRoute(
    new Request(`${ISSUER}/token`, {
      method: "POST",
      headers: FORM,
      body: new URLSearchParams({ grant_type: "client_credentials", client_id: caller.id, client_secret: secret }),
    }),
  );
  adminToken = (await granted.json()).access_token;
  dir = mkdtempSync(path.join(os.tmpdir(), "keyfob-openapi-"));
});
afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const pointer = (...parts: string[]) => parts.map((part) => part.replace(/~/g, "~0").replace(/\//g, "~1")).join("/");

/**
 * Calls `method path` (the document's path template filled with `values`) with the admin token, and
 * checks the answer against the document: the status is one it lists, and the body validates.
 */
async function call(
  method: Method,
  template: string,
  values: Record<string, string> = {},
  options: { query?: string; body?: unknown; raw?: { type: string; text: string }; token?: string } = {},
) {
  const filled = template.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(values[name]));
  const headers: Record<string, string> = { authorization: `Bearer ${options.token ?? adminToken}` };
  if (options.body !== undefined) headers["content-type"] = "application/json";
  if (options.raw) headers["content-type"] = options.raw.type;
  const response = await handlers[method](
    new Request(`${ISSUER}${API_BASE}${filled}${options.query ? `?${options.query}` : ""}`, {
      method,
      headers,
      body: options.raw ? options.raw.text : options.body === undefined ? undefined : JSON.stringify(options.body),
    }),
  );
  const operation = document.paths[template]?.[method.toLowerCase()];
  expect(operation, `${method} ${template} in the document`).toBeDefined();
  const status = String(response.status);
  const described = operation.responses[status];
  expect(described, `${method} ${template}: ${status} in the document`).toBeDefined();
  const text = await response.text();
  const where = described.$ref
    ? `openapi#${described.$ref.slice(1)}`
    : `openapi#/${pointer("paths", template, method.toLowerCase(), "responses", status)}`;
  const content = described.$ref ? document.components.responses[described.$ref.split("/").pop()!].content : described.content;
  if (!content) {
    expect(text, `${method} ${template}: ${status} has no body`).toBe("");
  } else {
    const [type] = Object.keys(content);
    expect(response.headers.get("content-type")).toContain(type);
    if (type === "application/json") {
      const body = JSON.parse(text);
      const validate = ajv.compile({ $ref: `${where}/${pointer("content", type, "schema")}` });
      expect(validate(body), `${method} ${template} ${status}: ${ajv.errorsText(validate.errors)}\n${text}`).toBe(true);
      if (response.ok) succeeded.add(`${method} ${template}`);
      return { status: response.status, body };
    }
  }
  if (response.ok) succeeded.add(`${method} ${template}`);
  return { status: response.status, body: text as unknown };
}

it("describes every answer of every operation, successes and errors", async () => {
  const k = keyfob();
  // Clients.
  const created = await call("POST", "/clients", {}, { body: { name: "OpenAPI app", logoUrl: "https://app.example.com/logo.png" } });
  expect(created.status).toBe(201);
  const clientId = (created.body as { id: string }).id;
  const c = { clientId };
  expect((await call("GET", "/clients", {}, { query: "search=OpenAPI&page=1" })).status).toBe(200);
  await call("GET", "/clients/{clientId}", c);
  await call("PATCH", "/clients/{clientId}", c, { body: { refreshTokensAllowed: true, requirePkce: true } });
  expect((await call("POST", "/clients/{clientId}/secret", c)).status).toBe(201);
  const rotated = await call("POST", "/clients/{clientId}/secret", c, { body: { overlapSeconds: 3600 } });
  expect(rotated.body).toMatchObject({ previousSecretExpiresAt: expect.any(String) });
  expect((await call("DELETE", "/clients/{clientId}/secret/previous", c)).status).toBe(204);
  const keys = { keys: [{ kty: "OKP", crv: "Ed25519", x: "11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo", kid: "k1" }] };
  const authentication = await call("POST", "/clients/{clientId}/authentication", c, {
    body: { tokenEndpointAuthMethod: "private_key_jwt", jwks: keys },
  });
  expect(authentication.body).toMatchObject({ tokenEndpointAuthMethod: "private_key_jwt", jwks: keys, jwksUri: null });
  const refused = await call("POST", "/clients/{clientId}/authentication", c, {
    body: { tokenEndpointAuthMethod: "private_key_jwt", jwksUri: "https://169.254.169.254/keys" },
  });
  expect(refused.status).toBe(400);
  await call("POST", "/clients/{clientId}/authentication", c, { body: { tokenEndpointAuthMethod: null } });
  for (const [list, field, value] of [
    ["redirect-uris", "uri", "https://app.example.com/callback"],
    ["post-logout-redirect-uris", "uri", "https://app.example.com/bye"],
    ["allowed-origins", "origin", "https://spa.example.com"],
  ]) {
    expect((await call("POST", `/clients/{clientId}/${list}`, c, { body: { [field]: value } })).status).toBe(201);
    await call("GET", `/clients/{clientId}/${list}`, c);
    expect((await call("DELETE", `/clients/{clientId}/${list}`, c, { query: `${field}=${encodeURIComponent(value)}` })).status).toBe(204);
  }
  // Signers belong to a license: a client whose id is an address.
  const licensed = { clientId: privateKeyToAccount(generatePrivateKey()).address };
  expect((await call("POST", "/clients", {}, { body: { id: licensed.clientId, name: "OpenAPI license" } })).status).toBe(201);
  const signer = privateKeyToAccount(generatePrivateKey()).address;
  const expiresAt = new Date(Date.now() + 86_400_000).toISOString();
  expect((await call("POST", "/clients/{clientId}/signers", c, { body: { address: signer, expiresAt } })).status).toBe(400);
  expect((await call("POST", "/clients/{clientId}/signers", licensed, { body: { address: signer, expiresAt } })).status).toBe(201);
  await call("GET", "/clients/{clientId}/signers", licensed);
  expect((await call("DELETE", "/clients/{clientId}/signers/{address}", { ...licensed, address: signer })).status).toBe(204);

  // Signing keys: rotate, then revoke the upcoming key the rotation published (no token carries it yet).
  await call("GET", "/keys");
  const keysRotated = (await call("POST", "/keys/rotate")).body as { items: { kid: string; status: string }[] };
  const upcoming = keysRotated.items.find((key) => key.status === "upcoming")!;
  expect((await call("POST", "/keys/{kid}/revoke", { kid: upcoming.kid })).status).toBe(200);
  expect((await call("POST", "/keys/{kid}/revoke", { kid: "0".repeat(40) })).status).toBe(400);

  // Accounts, sessions, tokens: a Google account with two sessions and a refresh grant; a license's Flow A token.
  const identity = google();
  const accountId = await resolveAccount(k, identity);
  const [session] = await Promise.all([startSession(k, { accountId, identity }), startSession(k, { accountId, identity })]);
  const app = await registerApp({ settings: { refreshTokensAllowed: true } });
  const code = (await authorize(app, identity, { scope: "openid email offline_access", prompt: "consent" })).searchParams.get("code")!;
  expect((await tokenExchange(app, { code })).status).toBe(200);
  const license = await registerLicense();
  const challenge = await requestChallenge(license);
  const issued = await (await submit(license, challenge.state, await license.owner.signMessage({ message: challenge.challenge }))).json();
  const a = { accountId };

  await call("GET", "/accounts", {}, { query: `search=${encodeURIComponent(identity.email!)}` });
  await call("GET", "/accounts/{accountId}", a);
  await call("GET", "/accounts/{accountId}/sessions", a);
  const thirdParty = await registerApp({ settings: { requireConsent: true } });
  await recordConsent(k, accountId, thirdParty.clientId, ["openid"]);
  expect((await call("GET", "/accounts/{accountId}/consents", a)).body).toMatchObject({ items: [{ clientId: thirdParty.clientId }] });
  expect((await call("DELETE", "/accounts/{accountId}/consents/{clientId}", { ...a, clientId: thirdParty.clientId })).status).toBe(200);
  expect((await call("GET", "/tokens", {}, { query: `client=${license.clientId}&page=1` })).body).toMatchObject({ total: 1 });
  expect((await call("GET", "/refresh-grants", {}, { query: `account=${accountId}` })).body).toMatchObject({ total: 1 });
  await call("POST", "/tokens/revoke", {}, { body: { jti: decodeJwt(issued.access_token).jti } });
  await call("POST", "/refresh-grants/revoke", {}, { body: { accountId } });
  expect((await call("DELETE", "/accounts/{accountId}/sessions/{sessionId}", { ...a, sessionId: session.session.id })).status).toBe(204);
  await call("DELETE", "/accounts/{accountId}/sessions", a);
  await call("POST", "/accounts/{accountId}/block", a);
  await call("POST", "/accounts/{accountId}/unblock", a);
  expect((await call("POST", "/admins", {}, { body: { accountId } })).status).toBe(201);
  await call("GET", "/admins");
  expect((await call("DELETE", "/admins/{accountId}", a)).status).toBe(204);
  await call("DELETE", "/accounts/{accountId}", a);
  expect((await call("GET", "/accounts/{accountId}", a)).status).toBe(404);

  // The audit log, and the client deleted last.
  await call("GET", "/audit", {}, { query: `client=${clientId}&page=1` });
  await call("GET", "/audit.csv", {}, { query: `client=${clientId}` });
  expect((await call("DELETE", "/clients/{clientId}", c)).status).toBe(204);
  expect((await call("DELETE", "/clients/{clientId}", licensed)).status).toBe(204);

  // Errors: no token, a bad token, invalid input.
  expect((await call("GET", "/clients", {}, { token: "not-a-token" })).status).toBe(401);
  expect((await call("PATCH", "/clients/{clientId}", { clientId: "kf_nope" }, { body: { enabled: true } })).status).toBe(404);
  expect((await call("POST", "/clients", {}, { body: { name: "" } })).status).toBe(400);
  expect((await call("POST", "/clients", {}, { raw: { type: "text/plain", text: "name=x" } })).status).toBe(415);
  const large = JSON.stringify({ name: "x".repeat(20_000) });
  expect((await call("POST", "/clients", {}, { raw: { type: "application/json", text: large } })).status).toBe(413);

  const operations = Object.entries(document.paths).flatMap(([p, methods]) => Object.keys(methods).map((m) => `${m.toUpperCase()} ${p}`));
  expect([...succeeded].sort()).toEqual(operations.filter((o) => o !== "GET /openapi.json").sort());
});

it("generates a TypeScript client with openapi-typescript that type-checks a script listing clients", async () => {
  writeFileSync(path.join(dir, "keyfob-api.d.ts"), astToString(await openapiTS(document as never)));
  writeFileSync(
    path.join(dir, "list-clients.ts"),
    `import type { paths } from "./keyfob-api";

type ClientList = paths["/clients"]["get"]["responses"][200]["content"]["application/json"];
type ListQuery = NonNullable<paths["/clients"]["get"]["parameters"]["query"]>;

export async function listClients(base: string, token: string, query: ListQuery): Promise<ClientList> {
  const url = new URL(\`\${base}/clients\`);
  if (query.search !== undefined) url.searchParams.set("search", query.search);
  if (query.page !== undefined) url.searchParams.set("page", String(query.page));
  const response = await fetch(url, { headers: { authorization: \`Bearer \${token}\` } });
  return (await response.json()) as ClientList;
}

export async function printAll(base: string, token: string) {
  for (let page = 1; ; page++) {
    const list = await listClients(base, token, { page });
    for (const client of list.items) console.log(client.id, client.name, client.enabled, client.createdAt);
    const pages: number = Math.ceil(list.total / list.pageSize);
    if (list.page >= pages) return;
  }
}

// @ts-expect-error page is a number
export const wrongPage: ListQuery = { page: "2" };
// @ts-expect-error no storage internals in the answer
export const internals = (list: ClientList) => list.items[0]._count;
`,
  );
  const tsc = path.join(ROOT, "node_modules/typescript/bin/tsc");
  const args = ["--noEmit", "--strict", "--skipLibCheck", "--module", "nodenext", "--moduleResolution", "nodenext", "--target", "es2022"];
  const run = spawnSync(process.execPath, [tsc, ...args, "--lib", "es2022,dom", "list-clients.ts"], { cwd: dir, encoding: "utf8" });
  expect(run.status, run.stdout + run.stderr).toBe(0);
});
