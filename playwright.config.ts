import { defineConfig, devices } from "@playwright/test";
import { upstreamEnv } from "./e2e/support/upstream";

/**
 * End-to-end tests against the built server (`npm run serve`), started here on E2E_PORT with the
 * database that scripts/test.ts prepared (DATABASE_URL, KEYFOB_SECRET in the environment).
 * Google and Apple are local OpenID providers (e2e/support/upstream.ts), started by globalSetup;
 * Keyfob gets their issuers and clients through GOOGLE_* / APPLE_*.
 */
const port = Number(process.env.E2E_PORT ?? 3100);
export const baseURL = `http://localhost:${port}`;

export default defineConfig({
  testDir: "e2e",
  outputDir: "test-results",
  timeout: 60_000,
  workers: 1,
  reporter: [["list"]],
  globalSetup: "./e2e/support/global-setup.ts",
  use: {
    baseURL,
    ...devices["Desktop Chrome"],
    launchOptions: {
      executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
      // No network beyond localhost on this machine: keep Chromium from calling home.
      args: [
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE localhost",
      ],
    },
    trace: "retain-on-failure",
  },
  webServer: {
    command: "npx tsx scripts/start.ts",
    url: `${baseURL}/.well-known/openid-configuration`,
    reuseExistingServer: false,
    timeout: 120_000,
    stdout: "ignore",
    stderr: "pipe",
    env: { PORT: String(port), ISSUER_URL: baseURL, NEXT_TELEMETRY_DISABLED: "1", ...upstreamEnv() },
  },
});
