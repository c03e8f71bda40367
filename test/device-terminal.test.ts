/**
 * `npm run token -- --device`, the terminal demo of the device authorization grant, against a
 * Keyfob instance in a process of its own (test/support/protocol-instance.ts, over HTTP): it prints
 * the user code; the user's side (/device, the hosted login) runs through lib/ on the same database
 * (e2e/ walks it in Chromium); the script then prints the tokens its polls got.
 */
import { spawn } from "node:child_process";
import path from "node:path";
import { decodeJwt } from "jose";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createClient, updateClient } from "@/lib/clients/registry";
import { confirmUserCode } from "@/lib/device/verification";
import { completeAuthorization } from "@/lib/interactions/interactions";
import { keyfob } from "@/lib/runtime";
import { type ProtocolProcess, startProtocolProcess } from "./support/protocol-process";

const ROOT = path.resolve(import.meta.dirname, "..");
let instance: ProtocolProcess | undefined;
let authUrl: string;

beforeAll(async () => {
  instance = await startProtocolProcess((url) => ({ ISSUER_URL: url, DEVICE_POLL_INTERVAL: "1" }));
  authUrl = instance.url;
}, 120_000);

afterAll(() => instance?.stop());

it("prints the code, waits for the user, and prints the tokens", async () => {
  const app = await createClient(keyfob().store, { name: "Terminal" });
  await updateClient(keyfob().store, app.id, { deviceFlow: true });
  const script = spawn(
    process.execPath,
    ["--import", "tsx", "scripts/token.ts", "--device", "--client-id", app.id, "--auth-url", authUrl, "--scope", "openid email"],
    {
      cwd: ROOT,
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let stdout = "";
  let stderr = "";
  script.stdout!.on("data", (chunk) => (stdout += chunk));
  const userCode = await new Promise<string>((resolve, reject) => {
    script.stderr!.on("data", (chunk) => {
      stderr += chunk;
      const code = /enter the code\s+([A-Z]{4}-[A-Z]{4})/.exec(stderr)?.[1];
      if (code) resolve(code);
    });
    script.once("exit", (code) => reject(new Error(`the script exited (${code}):\n${stderr}`)));
  });
  expect(stderr).toContain(`open ${authUrl}/device and enter the code`);

  const interactionId = await confirmUserCode(keyfob(), userCode, { ip: "203.0.113.20" });
  const identity = { provider: "google", subject: "google-terminal", email: "cli@example.com", emailVerified: true } as const;
  await completeAuthorization(keyfob(), interactionId, { identity });

  const exitCode = await new Promise((resolve) => script.once("exit", resolve));
  expect(exitCode, stderr).toBe(0);
  expect(stderr).toContain(`(or open ${authUrl}/device?user_code=${userCode})`);
  const tokens = JSON.parse(stdout) as { access_token: string; id_token: string };
  expect(decodeJwt(tokens.id_token)).toMatchObject({ iss: authUrl, aud: app.id, email: "cli@example.com" });
}, 60_000);
