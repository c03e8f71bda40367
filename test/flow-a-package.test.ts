/**
 * @keyfob/flow-a-client (packages/flow-a-client) as a developer gets it: `npm pack` builds it and
 * writes its tarball, which is installed in an empty folder of its own (under test-results/, which
 * git ignores); plain Node there gets a Flow A token from a running Keyfob (test/support/protocol-instance.ts
 * in a process of its own, over HTTP) with a raw key, and a DPoP-bound one with a viem account, and
 * its .d.ts types check a TypeScript caller.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { decodeJwt } from "jose";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { afterAll, beforeAll, expect, it } from "vitest";
import { addRedirectUri, addSigner, createClient } from "@/lib/clients/registry";
import { keyfob } from "@/lib/runtime";
import { type ProtocolProcess, startProtocolProcess } from "./support/protocol-process";

const ROOT = path.resolve(import.meta.dirname, "..");
const PACKAGE = path.join(ROOT, "packages/flow-a-client");
/** The environment of a developer's shell: none of the npm_* settings `npm test` passes down. */
const shellEnv = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith("npm_"))) as NodeJS.ProcessEnv;

let app: string;
let instance: ProtocolProcess | undefined;
let authUrl: string;

beforeAll(async () => {
  mkdirSync(path.join(ROOT, "test-results"), { recursive: true });
  app = mkdtempSync(path.join(ROOT, "test-results", "flow-a-package-"));
  instance = await startProtocolProcess((url) => ({ ISSUER_URL: url }));
  authUrl = instance.url;
}, 120_000);

afterAll(async () => {
  await instance?.stop();
  if (app) rmSync(app, { recursive: true, force: true });
});

it("packs, installs from its tarball in a folder of its own, and gets tokens from plain Node: a raw key's, a DPoP-bound one", async () => {
  const [packed] = JSON.parse(
    execFileSync("npm", ["pack", "--json", "--pack-destination", app], { cwd: PACKAGE, env: shellEnv, encoding: "utf8" }),
  );
  const shipped = packed.files.map((file: { path: string }) => file.path).sort();
  const modules = ["challenge", "dpop", "errors", "index"];
  expect(shipped).toEqual(["README.md", ...modules.flatMap((name) => [`dist/${name}.d.ts`, `dist/${name}.js`]), "package.json"]);
  // It imports viem and its own modules, nothing of the repository's.
  for (const file of readdirSync(path.join(PACKAGE, "dist")).filter((name) => name.endsWith(".js"))) {
    const imported = [...readFileSync(path.join(PACKAGE, "dist", file), "utf8").matchAll(/ from "([^"]+)"/g)].map((match) => match[1]);
    for (const specifier of imported) expect(specifier).toMatch(/^(viem|viem\/accounts|\.\/(challenge|dpop|errors)\.js)$/);
  }

  writeFileSync(path.join(app, "package.json"), JSON.stringify({ name: "my-app", private: true, type: "module" }));
  execFileSync("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund", `./${packed.filename}`], {
    cwd: app,
    env: shellEnv,
    stdio: "pipe",
    timeout: 240_000,
  });

  // A license and a signer for it, as an operator registers them.
  const license = privateKeyToAccount(generatePrivateKey()).address;
  const signerKey = generatePrivateKey();
  const domain = "https://package.example.com/callback";
  await createClient(keyfob().store, { id: license, name: "Package test" });
  await addRedirectUri(keyfob().store, license, domain);
  await addSigner(keyfob(), license, privateKeyToAccount(signerKey).address);

  writeFileSync(
    path.join(app, "get-token.js"),
    [
      `import { getToken } from "@keyfob/flow-a-client";`,
      `const tokens = await getToken({ authUrl: process.env.KEYFOB_URL, clientId: process.env.CLIENT_ID, domain: process.env.DOMAIN, privateKey: process.env.KEYFOB_PRIVATE_KEY });`,
      `console.log(tokens.access_token);`,
    ].join("\n"),
  );
  const accessToken = execFileSync(process.execPath, ["get-token.js"], {
    cwd: app,
    env: { ...shellEnv, KEYFOB_URL: authUrl, CLIENT_ID: license, DOMAIN: domain, KEYFOB_PRIVATE_KEY: signerKey },
    encoding: "utf8",
    timeout: 60_000,
  }).trim();
  expect(decodeJwt(accessToken)).toMatchObject({ iss: authUrl, aud: license, client_id: license });

  writeFileSync(
    path.join(app, "dpop-client.js"),
    [
      `import { createFlowAClient, generateDPoPKeyPair } from "@keyfob/flow-a-client";`,
      `import { privateKeyToAccount } from "viem/accounts";`,
      `const signer = privateKeyToAccount(process.env.KEYFOB_PRIVATE_KEY);`,
      `const client = createFlowAClient({ authUrl: process.env.KEYFOB_URL, clientId: process.env.CLIENT_ID, domain: process.env.DOMAIN, signer, dpop: await generateDPoPKeyPair() });`,
      `const { access_token } = await client.getToken();`,
      `const userinfo = await client.fetch(process.env.KEYFOB_URL + "/userinfo");`,
      `console.log(JSON.stringify({ access_token, jkt: await client.dpopThumbprint(), userinfo: userinfo.status, from: import.meta.resolve("@keyfob/flow-a-client") }));`,
    ].join("\n"),
  );
  const bound = JSON.parse(
    execFileSync(process.execPath, ["dpop-client.js"], {
      cwd: app,
      env: { ...shellEnv, KEYFOB_URL: authUrl, CLIENT_ID: license, DOMAIN: domain, KEYFOB_PRIVATE_KEY: signerKey },
      encoding: "utf8",
      timeout: 60_000,
    }),
  );
  expect(decodeJwt(bound.access_token)).toMatchObject({ aud: license, cnf: { jkt: bound.jkt } });
  expect(bound.userinfo).toBe(200);
  // The installed tarball, not the repository's workspace link.
  expect(bound.from).toBe(`file://${path.join(app, "node_modules/@keyfob/flow-a-client/dist/index.js")}`);
}, 300_000);

it("ships types that check a TypeScript caller", () => {
  writeFileSync(
    path.join(app, "check.ts"),
    [
      `import { createFlowAClient, getToken, KeyfobError, type Tokens } from "@keyfob/flow-a-client";`,
      `export const tokens: Promise<Tokens> = getToken({ authUrl: "https://auth.example.com", clientId: "0xLicense", domain: "https://app.example.com/cb", privateKey: "0x01" });`,
      `export const code = (error: KeyfobError): string => error.code;`,
      `export const refusal = (error: KeyfobError): [string, string, number, number | undefined] => [error.error, error.error_description, error.status, error.retryAfter];`,
      `const sign = async (message: string): Promise<\`0x\${string}\`> => (message ? "0x01" : "0x02");`,
      `export const client = createFlowAClient({ authUrl: "https://auth.example.com", clientId: "0xLicense", domain: "https://app.example.com/cb", signer: sign, address: "0x0000000000000000000000000000000000000001" });`,
      `// @ts-expect-error a signer or a private key, not both`,
      `createFlowAClient({ authUrl: "https://auth.example.com", clientId: "0xLicense", domain: "https://app.example.com/cb", signer: sign, privateKey: "0x01" });`,
      `// @ts-expect-error privateKey is a 0x-prefixed hex string`,
      `getToken({ authUrl: "https://auth.example.com", clientId: "0xLicense", domain: "https://app.example.com/cb", privateKey: "01" });`,
    ].join("\n"),
  );
  const tsc = path.join(ROOT, "node_modules/typescript/bin/tsc");
  const args = ["--noEmit", "--strict", "--skipLibCheck", "--module", "nodenext", "--moduleResolution", "nodenext", "--target", "es2022"];
  const run = spawnSync(process.execPath, [tsc, ...args, "--lib", "es2022,dom", "check.ts"], { cwd: app, encoding: "utf8" });
  expect(run.status, run.stdout + run.stderr).toBe(0);
}, 120_000);
