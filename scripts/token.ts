/**
 * Gets tokens through Flow A and prints them as JSON.
 *   npm run token -- --auth-url http://localhost:3000 --client-id 0x... --domain https://app.example --private-key 0x...
 * The private key may come from KEYFOB_PRIVATE_KEY instead, to keep it out of the shell history.
 */
import { parseArgs } from "node:util";
import type { Hex } from "viem";
import { getToken } from "@keyfob/flow-a-client";

const { values } = parseArgs({
  options: {
    "auth-url": { type: "string", default: "http://localhost:3000" },
    "client-id": { type: "string" },
    domain: { type: "string" },
    "private-key": { type: "string" },
    address: { type: "string" },
    scope: { type: "string" },
    "chain-id": { type: "string" },
  },
});
const privateKey = values["private-key"] ?? process.env.KEYFOB_PRIVATE_KEY;
if (!values["client-id"] || !values.domain || !privateKey) {
  console.error(
    "usage: npm run token -- --client-id <id> --domain <redirect URI> --private-key <0x...> [--auth-url URL] [--address 0x...] [--scope 'openid email'] [--chain-id 1]",
  );
  process.exit(2);
}
getToken({
  authUrl: values["auth-url"]!,
  clientId: values["client-id"],
  domain: values.domain,
  privateKey: privateKey as Hex,
  address: values.address,
  scope: values.scope,
  chainId: values["chain-id"] ? Number(values["chain-id"]) : undefined,
})
  .then((tokens) => console.log(JSON.stringify(tokens, null, 2)))
  .catch((error) => {
    console.error(error instanceof Error ? error.message : String(error));
    process.exit(1);
  });
