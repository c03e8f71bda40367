/**
 * Gets tokens and prints them as JSON.
 *
 * Flow A (a wallet's key signs in directly):
 *   npm run token -- --auth-url http://localhost:3000 --client-id 0x... --domain https://app.example --private-key 0x...
 * --auth-url defaults to KEYFOB_URL, else http://localhost:3000. Exit codes: 0 done, 1 refused or
 * failed, 2 usage, 4 Keyfob did not answer.
 * The private key may come from KEYFOB_PRIVATE_KEY instead, to keep it out of the shell history.
 *
 * A vehicle token (RFC 8693 token exchange) for that developer token, in the same call: add
 *   --vehicle did:erc721:<chainId>:<contract>:<tokenId> --privileges GetNonLocationHistory,GetLocationHistory
 *
 * The device authorization grant (RFC 8628), as a terminal or car screen does it: prints the code
 * and where to enter it (a phone, any hosted login method), then polls until the user approved:
 *   npm run token -- --device --client-id <id> [--client-secret <secret>] [--scope 'openid email']
 * The secret (confidential clients) may come from KEYFOB_CLIENT_SECRET instead.
 */
import { parseArgs } from "node:util";
import * as client from "openid-client";
import type { Hex } from "viem";
import { getToken, getVehicleToken } from "@keyfob/flow-a-client";

const { values } = parseArgs({
  options: {
    // KEYFOB_URL names the instance, as for npm run demo.
    "auth-url": { type: "string", default: process.env.KEYFOB_URL ?? "http://localhost:3000" },
    "client-id": { type: "string" },
    domain: { type: "string" },
    "private-key": { type: "string" },
    address: { type: "string" },
    scope: { type: "string" },
    "chain-id": { type: "string" },
    device: { type: "boolean" },
    "client-secret": { type: "string" },
    vehicle: { type: "string" },
    privileges: { type: "string" },
  },
});

/** Whether a failure is the server not answering at all (refused, no such host, …), anywhere in its causes. */
function unreachable(error: unknown): boolean {
  for (let e = error; e instanceof Error; e = e.cause)
    if (
      ["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "ECONNRESET", "EHOSTUNREACH", "ETIMEDOUT"].includes(String((e as { code?: unknown }).code))
    )
      return true;
  return false;
}

/** One line on stderr; exit 4 when Keyfob did not answer, with what to do, else 1. */
function fail(error: unknown): never {
  console.error(error instanceof Error ? error.message : String(error));
  if (!unreachable(error)) process.exit(1);
  console.error(
    `Is Keyfob running at ${values["auth-url"]}? Start it with \`npm start\` in another terminal, or set KEYFOB_URL (or --auth-url).`,
  );
  process.exit(4);
}

/** The device flow: the user code on stderr for the person, the tokens on stdout. */
async function deviceFlow(clientId: string) {
  const issuer = new URL(values["auth-url"]!);
  const secret = values["client-secret"] ?? process.env.KEYFOB_CLIENT_SECRET;
  const config = await client.discovery(
    issuer,
    clientId,
    undefined,
    secret ? client.ClientSecretBasic(secret) : client.None(),
    issuer.protocol === "http:" ? { execute: [client.allowInsecureRequests] } : undefined,
  );
  const started = await client.initiateDeviceAuthorization(config, { scope: values.scope ?? "openid" });
  console.error(`On your phone, open ${started.verification_uri} and enter the code\n\n    ${started.user_code}\n`);
  if (started.verification_uri_complete) console.error(`(or open ${started.verification_uri_complete})\n`);
  console.error(`Waiting for you to sign in (the code expires in ${Math.round(started.expires_in / 60)} minutes)…`);
  const tokens = await client.pollDeviceAuthorizationGrant(config, started);
  console.log(JSON.stringify(tokens, null, 2));
}

const clientId = values["client-id"];
if (values.device) {
  if (!clientId) {
    console.error("usage: npm run token -- --device --client-id <id> [--client-secret <secret>] [--auth-url URL] [--scope 'openid email']");
    process.exit(2);
  }
  deviceFlow(clientId).catch(fail);
} else {
  const privateKey = values["private-key"] ?? process.env.KEYFOB_PRIVATE_KEY;
  if (!clientId || !values.domain || !privateKey) {
    console.error(
      "usage: npm run token -- --client-id <id> --domain <redirect URI> --private-key <0x...> [--auth-url URL] [--address 0x...] [--scope 'openid email'] [--chain-id 1]\n" +
        "         [--vehicle did:erc721:<chain id>:<contract>:<token id> --privileges GetNonLocationHistory,GetLocationHistory]\n" +
        "       npm run token -- --device --client-id <id> [--client-secret <secret>] [--auth-url URL] [--scope 'openid email']",
    );
    process.exit(2);
  }
  const flowA = {
    authUrl: values["auth-url"]!,
    clientId,
    domain: values.domain,
    privateKey: privateKey as Hex,
    address: values.address,
    scope: values.scope,
    chainId: values["chain-id"] ? Number(values["chain-id"]) : undefined,
  };
  const vehicle = values.vehicle;
  const privileges = values.privileges?.split(/[\s,]+/).filter(Boolean) ?? [];
  if (vehicle !== undefined && privileges.length === 0) {
    console.error("--vehicle needs --privileges, e.g. --privileges GetNonLocationHistory,GetLocationHistory");
    process.exit(2);
  }
  (vehicle === undefined ? getToken(flowA) : getVehicleToken({ ...flowA, vehicle, privileges }))
    .then((tokens) => console.log(JSON.stringify(tokens, null, 2)))
    .catch(fail);
}
