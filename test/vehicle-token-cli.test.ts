/**
 * A vehicle token in one call: `npm run token -- --vehicle …` and @keyfob/flow-a-client's
 * getVehicleToken, against a Keyfob instance in a process of its own (over HTTP) whose access
 * policy is the development one (VEHICLE_GRANTS), so no chain is needed here; the chain's policy is
 * test/vehicle-tokens.test.ts's.
 */
import { spawn } from "node:child_process";
import path from "node:path";
import { decodeJwt } from "jose";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, expect, it } from "vitest";
import { getVehicleToken, KeyfobError } from "@keyfob/flow-a-client";
import { addRedirectUri, createClient, updateClient } from "@/lib/clients/registry";
import { keyfob } from "@/lib/runtime";
import { type ProtocolProcess, startProtocolProcess } from "./support/protocol-process";

const ROOT = path.resolve(import.meta.dirname, "..");
const key = generatePrivateKey();
const license = privateKeyToAccount(key).address;
const domain = "https://fleet.example.com/callback";
const vehicle = "did:erc721:1:0x5fbdb2315678afecb367f032d93f642f64180aa3:5";
let instance: ProtocolProcess | undefined;

beforeAll(async () => {
  await createClient(keyfob().store, { id: license, name: "Fleet app" });
  await addRedirectUri(keyfob().store, license, domain);
  await updateClient(keyfob().store, license, { tokenExchange: true });
  instance = await startProtocolProcess((url) => ({ ISSUER_URL: url, CHAIN_ID: "1", VEHICLE_GRANTS: `${vehicle}=${license}:1+4` }));
}, 120_000);

afterAll(() => instance?.stop());

it("getVehicleToken gets a developer token with Flow A, then the vehicle token, in one call", async () => {
  const flowA = { authUrl: instance!.url, clientId: license, domain, privateKey: key };
  const token = await getVehicleToken({ ...flowA, vehicle, privileges: ["GetNonLocationHistory", "privilege:GetLocationHistory"] });
  expect(token).toMatchObject({
    issued_token_type: "urn:ietf:params:oauth:token-type:access_token",
    token_type: "Bearer",
    expires_in: 600,
  });
  expect(decodeJwt(token.access_token)).toMatchObject({ asset: vehicle, privilege_ids: [1, 4], sub: license, iss: instance!.url });
  const refused = await getVehicleToken({ ...flowA, vehicle, privileges: ["ExecuteCommands"] }).catch((error: unknown) => error);
  expect(refused).toBeInstanceOf(KeyfobError);
  expect(refused).toMatchObject({ status: 400, code: "invalid_scope" });
});

it("npm run token -- --vehicle prints the vehicle token", async () => {
  const script = spawn(
    process.execPath,
    [
      "--import",
      "tsx",
      "scripts/token.ts",
      ...["--auth-url", instance!.url, "--client-id", license, "--domain", domain],
      ...["--vehicle", vehicle, "--privileges", "GetLocationHistory"],
    ],
    { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, KEYFOB_PRIVATE_KEY: key } },
  );
  let stdout = "";
  let stderr = "";
  script.stdout!.on("data", (chunk) => (stdout += chunk));
  script.stderr!.on("data", (chunk) => (stderr += chunk));
  const exitCode = await new Promise((resolve) => script.once("exit", resolve));
  expect(exitCode, stderr).toBe(0);
  const token = JSON.parse(stdout) as { access_token: string; scope: string };
  expect(token.scope).toBe("privilege:GetLocationHistory");
  expect(decodeJwt(token.access_token)).toMatchObject({ asset: vehicle, privilege_ids: [4] });
}, 60_000);
