/**
 * Flow A over real HTTP against the built server: the demo command, the client library, raw
 * request shapes existing SDKs send, and tokens checked against the published JWKS.
 */
import { execFile } from "node:child_process";
import { systemClock } from "@/lib/clock";
import { promisify } from "node:util";
import { expect, test } from "@playwright/test";
import { createRemoteJWKSet, jwtVerify } from "jose";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { getToken, KeyfobError } from "@keyfob/flow-a-client";
import { addRedirectUri, addSigner, createClient, revokeSigner, rotateClientSecret, updateClient } from "../lib/clients/registry";
import { createStore } from "../lib/store";
import { baseURL } from "../playwright.config";

const store = createStore(process.env.DATABASE_URL!, 2);
test.afterAll(() => store.close());

async function license() {
  const owner = privateKeyToAccount(generatePrivateKey());
  const domain = `https://app.example.com/${owner.address.slice(2, 8)}`;
  await createClient(store, { id: owner.address, name: "e2e license" });
  await addRedirectUri(store, owner.address, domain);
  return { owner, clientId: owner.address, domain };
}

test("npm run demo registers a client through the management API, runs Flow A, prints verified claims and deletes the client", async () => {
  // What an operator provides: a confidential client allowed the management API's keyfob:clients scope.
  const operator = await createClient(store, { name: "Demo operator" });
  const secret = await rotateClientSecret({ store, clock: systemClock }, operator.id);
  await updateClient(store, operator.id, { managementApi: true, managementScopes: ["keyfob:clients"] });
  // No DATABASE_URL: the demo reaches Keyfob over HTTP only.
  const { DATABASE_URL: _, ...env } = process.env;
  const { stdout } = await promisify(execFile)("npx", ["tsx", "scripts/demo.ts"], {
    env: { ...env, KEYFOB_URL: baseURL, KEYFOB_CLIENT_ID: operator.id, KEYFOB_CLIENT_SECRET: secret },
  });
  expect(stdout).toContain(`tokens verified against ${baseURL}/keys`);
  const claims = JSON.parse(stdout.slice(stdout.indexOf("{"))).access_token_claims;
  expect(claims).toMatchObject({ iss: baseURL, provider_id: "web3", email_verified: false });
  const demoClient = /registered client (0x[0-9a-fA-F]{40})/.exec(stdout)![1];
  expect(stdout).toContain(`deleted the demo client ${demoClient} again`);
  expect(await store.clients.find(demoClient)).toBeUndefined();
});

test("the client library gets tokens through a signer, and a revoked signer is refused", async () => {
  const { clientId, domain } = await license();
  const signerKey = generatePrivateKey();
  const signer = privateKeyToAccount(signerKey).address;
  await addSigner({ store, clock: systemClock }, clientId, signer);

  const tokens = await getToken({ authUrl: baseURL, clientId, domain, privateKey: signerKey });
  const { payload } = await jwtVerify(tokens.id_token, createRemoteJWKSet(new URL(`${baseURL}/keys`)), {
    issuer: baseURL,
    audience: clientId,
  });
  expect(payload.ethereum_address).toBe(clientId);

  await revokeSigner({ store, clock: systemClock }, clientId, signer);
  const refused = await getToken({ authUrl: baseURL, clientId, domain, privateKey: signerKey }).catch((e) => e);
  expect(refused).toBeInstanceOf(KeyfobError);
  expect(refused).toMatchObject({ status: 400, code: "invalid_grant" });
});

test("accepts the SDKs' request shape: parameters in the query, empty body, no Content-Type", async ({ request }) => {
  const { owner, clientId, domain } = await license();
  const query = `client_id=${clientId.toLowerCase()}&domain=${encodeURIComponent(domain)}&scope=openid+email&response_type=code&address=${clientId.toLowerCase()}`;
  const challenge = await request.post(`/auth/web3/generate_challenge?${query}`);
  expect(challenge.status()).toBe(200);
  expect(challenge.headers()["cache-control"]).toBe("no-store");
  const { state, challenge: text } = await challenge.json();

  const signature = await owner.signMessage({ message: text });
  const submitted = await request.post("/auth/web3/submit_challenge", {
    form: { client_id: clientId, state, grant_type: "authorization_code", domain, signature },
  });
  expect(submitted.status()).toBe(200);
  expect(Object.keys(await submitted.json())).toEqual(["access_token", "token_type", "expires_in", "id_token"]);
});

test("answers bad input with the documented JSON error, never a 500", async ({ request }) => {
  const cases = [
    request.post(`/auth/web3/generate_challenge?client_id=nope&domain=x&scope=openid&response_type=code&address=0x${"ab".repeat(20)}`),
    request.post("/auth/web3/submit_challenge", {
      form: { grant_type: "authorization_code", client_id: "x", state: "y", domain: "z", signature: `0x${"ff".repeat(70)}` },
    }),
    request.post("/auth/web3/submit_challenge", {
      data: "x".repeat(20_000),
      headers: { "content-type": "application/x-www-form-urlencoded" },
    }),
  ];
  const expected = [401, 400, 413];
  for (const [i, pending] of cases.entries()) {
    const response = await pending;
    expect(response.status()).toBe(expected[i]);
    const body = await response.json();
    expect(body).toEqual({
      error: expect.any(String),
      error_description: expect.any(String),
      status: expected[i],
      message: body.error_description,
    });
    expect(JSON.stringify(body)).not.toMatch(/at \w+ \(|node_modules/); // no stack traces
  }
});

test("publishes discovery and JWKS", async ({ request }) => {
  const discovery = await (await request.get("/.well-known/openid-configuration")).json();
  expect(discovery.issuer).toBe(baseURL);
  const keys = await request.get(discovery.jwks_uri);
  expect(keys.headers()["cache-control"]).toBe("public, max-age=300");
  const alias = await request.get("/.well-known/jwks.json");
  expect(await alias.json()).toEqual(await keys.json());
});
