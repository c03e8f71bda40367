/**
 * Flow A in one command, against any running Keyfob (KEYFOB_URL, default http://localhost:3000),
 * over HTTP only: with a management API client's credentials (KEYFOB_CLIENT_ID and
 * KEYFOB_CLIENT_SECRET, allowed the keyfob:clients scope) it registers a demo client through the
 * management API (a fresh "license" address with a fresh signer key), gets tokens with the client
 * library, verifies them against the published JWKS, prints the decoded claims, and deletes the
 * demo client again.
 */
import { getToken, type Tokens } from "@keyfob/flow-a-client";
import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from "jose";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";

const authUrl = (process.env.KEYFOB_URL ?? "http://localhost:3000").replace(/\/+$/, "");
const SCOPE = "keyfob:clients";

class DemoError extends Error {}

/** A JSON answer, or a DemoError naming the step and Keyfob's error. */
async function json<T>(step: string, response: Response): Promise<T> {
  const body = await response.json().catch(() => ({}));
  if (!response.ok) throw new DemoError(`${step}: ${response.status} ${body.error ?? ""} ${body.error_description ?? ""}`.trim());
  return body as T;
}

/** A management API token (client_credentials, RFC 6749 4.4) for the operator's client. */
async function managementToken(clientId: string, secret: string): Promise<string> {
  const response = await fetch(`${authUrl}/token`, {
    method: "POST",
    body: new URLSearchParams({ grant_type: "client_credentials", scope: SCOPE, client_id: clientId, client_secret: secret }),
  });
  return (await json<{ access_token: string }>(`a ${SCOPE} token for ${clientId}`, response)).access_token;
}

async function main() {
  const operator = process.env.KEYFOB_CLIENT_ID;
  const secret = process.env.KEYFOB_CLIENT_SECRET;
  if (!operator || !secret) {
    throw new DemoError(
      "set KEYFOB_CLIENT_ID and KEYFOB_CLIENT_SECRET to a client allowed the management API with the keyfob:clients scope (README: npm run demo)",
    );
  }
  const discovery = await json<{ issuer: string; jwks_uri: string }>(
    "discovery",
    await fetch(`${authUrl}/.well-known/openid-configuration`),
  );
  const token = await managementToken(operator, secret);
  const api = async <T>(step: string, method: string, path: string, body?: unknown) =>
    json<T>(
      step,
      await fetch(`${authUrl}/api/admin/v1${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, ...(body !== undefined && { "content-type": "application/json" }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      }),
    );

  const license = privateKeyToAccount(generatePrivateKey()).address;
  const signerKey = generatePrivateKey();
  const signer = privateKeyToAccount(signerKey).address;
  const domain = "http://localhost:8080/callback";

  await api("registering the demo client", "POST", "/clients", { id: license, name: "Keyfob demo" });
  let verified: { kid?: string; tokens: Tokens; claims: unknown };
  try {
    await api("adding its redirect URI", "POST", `/clients/${license}/redirect-uris`, { uri: domain });
    await api("enabling its signer", "POST", `/clients/${license}/signers`, { address: signer });
    console.log(`registered client ${license} (redirect URI ${domain}, signer ${signer})`);

    const tokens = await getToken({ authUrl, clientId: license, domain, privateKey: signerKey });
    const jwks = createRemoteJWKSet(new URL(discovery.jwks_uri));
    const { payload } = await jwtVerify(tokens.access_token, jwks, { issuer: discovery.issuer, audience: license });
    await jwtVerify(tokens.id_token, jwks, { issuer: discovery.issuer, audience: license });
    verified = { kid: decodeProtectedHeader(tokens.access_token).kid, tokens, claims: payload };
  } finally {
    const deleted = await fetch(`${authUrl}/api/admin/v1/clients/${license}`, {
      method: "DELETE",
      headers: { authorization: `Bearer ${token}` },
    });
    if (deleted.ok) console.log(`deleted the demo client ${license} again`);
    else console.error(`could not delete the demo client ${license} (${deleted.status}): delete it in the dashboard`);
  }
  const { kid, tokens, claims } = verified;
  console.log(`tokens verified against ${discovery.jwks_uri} (kid ${kid})`);
  console.log(JSON.stringify({ token_type: tokens.token_type, expires_in: tokens.expires_in, access_token_claims: claims }, null, 2));
}

main().catch((error) => {
  console.error(`demo failed: ${error instanceof Error ? error.message : String(error)}`);
  if (!(error instanceof DemoError))
    console.error(`Is Keyfob running at ${authUrl}? Start it with \`npm start\` in another terminal, or set KEYFOB_URL.`);
  process.exit(1);
});
