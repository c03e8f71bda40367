/**
 * @keyfob/flow-a-client (packages/flow-a-client) as a developer gets it: `npm pack` builds it and
 * writes its tarball, which is installed in an empty folder outside the repository; three lines of
 * JavaScript there get a Flow A token from a running Keyfob (test/support/protocol-instance.ts in a
 * process of its own, over HTTP), and its .d.ts types check a TypeScript caller.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
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
  app = mkdtempSync(path.join(os.tmpdir(), "keyfob-app-"));
  instance = await startProtocolProcess((url) => ({ ISSUER_URL: url }));
  authUrl = instance.url;
}, 120_000);

afterAll(async () => {
  await instance?.stop();
  if (app) rmSync(app, { recursive: true, force: true });
});

it("packs, installs from its tarball in an empty folder, and gets a Flow A token in three lines", async () => {
  const [packed] = JSON.parse(
    execFileSync("npm", ["pack", "--json", "--pack-destination", app], { cwd: PACKAGE, env: shellEnv, encoding: "utf8" }),
  );
  const shipped = packed.files.map((file: { path: string }) => file.path).sort();
  expect(shipped).toEqual(["README.md", "dist/index.d.ts", "dist/index.js", "package.json"]);
  expect(readFileSync(path.join(PACKAGE, "dist/index.js"), "utf8")).not.toMatch(/from "\.{1,2}\//);

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
}, 300_000);

it("ships types that check a TypeScript caller", () => {
  writeFileSync(
    path.join(app, "check.ts"),
    [
      `import { getToken, KeyfobError, type Tokens } from "@keyfob/flow-a-client";`,
      `export const tokens: Promise<Tokens> = getToken({ authUrl: "https://auth.example.com", clientId: "0xLicense", domain: "https://app.example.com/cb", privateKey: "0x01" });`,
      `export const code = (error: KeyfobError): string => error.code;`,
      `// @ts-expect-error privateKey is a 0x-prefixed hex string`,
      `getToken({ authUrl: "https://auth.example.com", clientId: "0xLicense", domain: "https://app.example.com/cb", privateKey: "01" });`,
    ].join("\n"),
  );
  const tsc = path.join(ROOT, "node_modules/typescript/bin/tsc");
  const args = ["--noEmit", "--strict", "--skipLibCheck", "--module", "nodenext", "--moduleResolution", "nodenext", "--target", "es2022"];
  const run = spawnSync(process.execPath, [tsc, ...args, "--lib", "es2022,dom", "check.ts"], { cwd: app, encoding: "utf8" });
  expect(run.status, run.stdout + run.stderr).toBe(0);
}, 120_000);
