/**
 * Flow A in one command, against a running Keyfob (npm start): registers a demo client (a fresh
 * "license" address with a fresh signer key), gets tokens with the client library, verifies them
 * against the published JWKS and prints the decoded claims.
 */
import "./load-env";
import { getToken } from "@keyfob/flow-a-client";
import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from "jose";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { prepareStorage } from "../lib/bootstrap";
import { addRedirectUri, addSigner, createClient } from "../lib/clients/registry";
import { loadConfig } from "../lib/config";
import { createStore } from "../lib/store";

async function main() {
  const { config, stop } = await prepareStorage(loadConfig());
  const authUrl = process.env.KEYFOB_URL ?? config.issuerUrl;
  const license = privateKeyToAccount(generatePrivateKey()).address;
  const signerKey = generatePrivateKey();
  const signer = privateKeyToAccount(signerKey).address;
  const domain = "http://localhost:8080/callback";

  const store = createStore(config.databaseUrl, 2);
  try {
    await createClient(store, { id: license, name: "Keyfob demo" });
    await addRedirectUri(store, license, domain);
    await addSigner(store, license, signer);
  } finally {
    await store.close();
    await stop();
  }
  console.log(`registered client ${license} (redirect URI ${domain}, signer ${signer})`);

  const tokens = await getToken({ authUrl, clientId: license, domain, privateKey: signerKey });
  const jwks = createRemoteJWKSet(new URL(`${authUrl}/keys`));
  const { payload } = await jwtVerify(tokens.access_token, jwks, { issuer: config.issuerUrl, audience: license });
  await jwtVerify(tokens.id_token, jwks, { issuer: config.issuerUrl, audience: license });
  console.log(`tokens verified against ${authUrl}/keys (kid ${decodeProtectedHeader(tokens.access_token).kid})`);
  console.log(JSON.stringify({ token_type: tokens.token_type, expires_in: tokens.expires_in, access_token_claims: payload }, null, 2));
}

main().catch((error) => {
  console.error(`demo failed: ${error instanceof Error ? error.message : String(error)}`);
  console.error("Is Keyfob running? Start it with `npm start` in another terminal.");
  process.exit(1);
});
