/**
 * The page endpoints (/auth, /session/end) through the endpoint wrapper (lib/http/endpoint.ts), as
 * the route files export them (the dashboard's test sign-in too): /session/end is counted against the per-address budget that /auth
 * and the token endpoints share (429 with a page and Retry-After over it), and both are counted in
 * the metrics, a refusal by its outcome (an error redirect to the application included).
 */
import { afterAll, describe, expect, it, vi } from "vitest";
import { GET as authorizeGet } from "@/app/auth/route";
import { GET as tryCallbackGet } from "@/app/admin/try/callback/route";
import { GET as tryStartGet } from "@/app/admin/try/start/route";
import { GET as endSessionGet } from "@/app/session/end/route";
import { loadConfig } from "@/lib/config";
import { CLIENT_IP_HEADER } from "@/lib/http/client-ip";
import { createKeyfob } from "@/lib/keyfob";
import { requests } from "@/lib/metrics";
import { ISSUER } from "./support/flow-a";
import { authorizeQuery, registerApp } from "./support/flow-b";

/** A Keyfob with a small per-address budget, serving the route files (lib/runtime's). */
const limited = vi.hoisted(() => ({ keyfob: undefined as unknown as import("@/lib/keyfob").Keyfob }));
vi.mock("@/lib/runtime", () => ({ keyfob: () => limited.keyfob }));
vi.mock("@/app/auth/session-cookie", () => ({ currentLoginSession: async () => undefined, clearSessionCookie: async () => undefined }));
vi.mock("@/app/auth/login-cookie", () => ({ bindInteraction: async () => {} }));
// A browser without cookies: signed out of the dashboard.
vi.mock("next/headers", () => ({ cookies: async () => ({ get: () => undefined }) }));
limited.keyfob = createKeyfob({
  ...loadConfig(),
  recoveryThreads: 0,
  rateLimits: { perIp: { max: 5, windowSeconds: 60 }, perClient: { max: 8, windowSeconds: 60 }, adminSignIn: undefined },
});
afterAll(() => limited.keyfob.close());

let nextAddress = 1;
/** A caller address of its own per test (TEST-NET-2), so tests do not share budgets. */
const freshIp = () => `198.51.100.${nextAddress++}`;

/** How many requests to `endpoint` the metrics have counted with `outcome`. */
async function counted(endpoint: string, outcome: string): Promise<number> {
  const { values } = await requests.get();
  return values.find((v) => v.labels.endpoint === endpoint && v.labels.outcome === outcome)?.value ?? 0;
}

describe("/session/end through the endpoint wrapper", () => {
  it("is rate-limited per address: 429 with Retry-After past the budget, and counted in the metrics", async () => {
    const ip = freshIp();
    const logout = () =>
      endSessionGet(new Request(`${ISSUER}/session/end`, { headers: { [CLIENT_IP_HEADER]: ip, "accept-language": "en" } }));
    const [succeeded, refused] = [await counted("end_session", "success"), await counted("end_session", "temporarily_unavailable")];
    for (let i = 0; i < 5; i++) expect((await logout()).status).toBe(200); // the confirmation page
    const over = await logout();
    expect(over.status).toBe(429);
    expect(Number(over.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(over.headers.get("content-type")).toMatch(/^text\/html/);
    expect(await over.text()).toContain("Too many requests");
    expect(await counted("end_session", "success")).toBe(succeeded + 5);
    expect(await counted("end_session", "temporarily_unavailable")).toBe(refused + 1);
    // Another address is not affected.
    expect((await endSessionGet(new Request(`${ISSUER}/session/end`, { headers: { [CLIENT_IP_HEADER]: freshIp() } }))).status).toBe(200);
  });

  it("counts a refused logout by its reason code, and shows the reason from the catalog", async () => {
    const before = await counted("end_session", "invalid_id_token_hint");
    const query = new URLSearchParams({ id_token_hint: "not-a-token", ui_locales: "de" });
    const response = await endSessionGet(new Request(`${ISSUER}/session/end?${query}`, { headers: { [CLIENT_IP_HEADER]: freshIp() } }));
    expect(response.status).toBe(400);
    expect(await response.text()).toContain("Der id_token_hint ist kein von Keyfob ausgestelltes ID-Token.");
    expect(await counted("end_session", "invalid_id_token_hint")).toBe(before + 1);
  });
});

describe("/auth failures in the metrics", () => {
  it("counts an untrusted request and an error redirect to the application as refusals, not successes", async () => {
    const app = await registerApp();
    const at = (query: URLSearchParams) =>
      authorizeGet(new Request(`${ISSUER}/auth?${query}`, { headers: { [CLIENT_IP_HEADER]: freshIp() } }));
    const before = {
      untrusted: await counted("authorize", "untrusted_request"),
      scope: await counted("authorize", "invalid_scope"),
      success: await counted("authorize", "success"),
    };

    const unknown = await at(authorizeQuery(app, { client_id: "kf_unknown" }));
    expect(unknown.status).toBe(400);
    const badScope = await at(authorizeQuery(app, { scope: "email", state: "s" }));
    expect(badScope.status).toBe(303);
    expect(new URL(badScope.headers.get("location")!).searchParams.get("error")).toBe("invalid_scope");

    expect(await counted("authorize", "untrusted_request")).toBe(before.untrusted + 1);
    expect(await counted("authorize", "invalid_scope")).toBe(before.scope + 1);
    expect(await counted("authorize", "success")).toBe(before.success);
  });
});

describe("the dashboard's test sign-in through the endpoint wrapper", () => {
  it("sends a signed-out browser to the admin sign-in from both steps, counted as refused", async () => {
    for (const [endpoint, handler, path] of [
      ["admin_try_start", tryStartGet, "/admin/try/start?client=anything"],
      ["admin_try_callback", tryCallbackGet, "/admin/try/callback?code=x&state=y"],
    ] as const) {
      const before = await counted(endpoint, "access_denied");
      const response = await handler(new Request(`${ISSUER}${path}`));
      expect([response.status, response.headers.get("location")]).toEqual([303, "/admin/login"]);
      expect(await counted(endpoint, "access_denied")).toBe(before + 1);
    }
  });
});
