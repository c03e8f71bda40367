/**
 * The stand-ins for Google and Apple in the browser tests: two real OpenID providers (oidc-provider)
 * on localhost ports chosen once per test run. playwright.config.ts hands their issuers and clients
 * to Keyfob (GOOGLE_* / APPLE_*), and global-setup.ts starts them.
 *
 * Playwright starts the webServer before globalSetup, so the ports are decided when the config is
 * first evaluated (in the runner's process) and passed on through the environment; Keyfob contacts
 * the providers only when someone signs in, long after both are up.
 */
import { freePortsSync } from "../../scripts/free-port";

process.env.E2E_UPSTREAM_PORTS ??= freePortsSync(2).join(",");
const [googlePort, applePort] = process.env.E2E_UPSTREAM_PORTS.split(",").map(Number);

export type Upstream = { id: "google" | "apple"; port: number; issuer: string; clientId: string; clientSecret: string };

export const upstreams: Record<"google" | "apple", Upstream> = {
  google: {
    id: "google",
    port: googlePort,
    issuer: `http://localhost:${googlePort}`,
    clientId: "keyfob-e2e-google",
    clientSecret: "google-stand-in-secret-0123456789abcdef",
  },
  apple: {
    id: "apple",
    port: applePort,
    issuer: `http://localhost:${applePort}`,
    clientId: "keyfob-e2e-apple",
    clientSecret: "apple-stand-in-secret-0123456789abcdef",
  },
};

/** What Keyfob's web server needs to use the stand-ins. */
export function upstreamEnv(): Record<string, string> {
  const { google, apple } = upstreams;
  return {
    GOOGLE_CLIENT_ID: google.clientId,
    GOOGLE_CLIENT_SECRET: google.clientSecret,
    GOOGLE_ISSUER: google.issuer,
    APPLE_CLIENT_ID: apple.clientId,
    APPLE_CLIENT_SECRET: apple.clientSecret,
    APPLE_ISSUER: apple.issuer,
  };
}
