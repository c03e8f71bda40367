import { generatePrivateKey, privateKeyToAccount, type PrivateKeyAccount } from "viem/accounts";
import { addRedirectUri, addSigner, createClient } from "@/lib/clients/registry";
import type { Keyfob } from "@/lib/keyfob";
import { keyfob } from "@/lib/runtime";
import { route } from "./routes";

const generateChallengeGet = route("/auth/web3/generate_challenge");
const generateChallengeRoute = route("/auth/web3/generate_challenge");
const submitChallengeRoute = route("/auth/web3/submit_challenge");

export const ISSUER = "http://localhost:3000";

/** A developer license registered with one redirect URI (the Flow A "domain"). */
export type License = { clientId: string; domain: string; owner: PrivateKeyAccount };

/** Registered through `on` (default: the process-wide instance). */
export async function registerLicense(options: { domain?: string; on?: Keyfob } = {}): Promise<License> {
  const owner = privateKeyToAccount(generatePrivateKey());
  const domain = options.domain ?? `https://app-${owner.address.slice(2, 10).toLowerCase()}.example.com/callback`;
  const { store } = options.on ?? keyfob();
  await createClient(store, { id: owner.address, name: "Test license" });
  await addRedirectUri(store, owner.address, domain);
  return { clientId: owner.address, domain, owner };
}

export async function enableSigner(license: License, expiresAt?: Date, on: Keyfob = keyfob()): Promise<PrivateKeyAccount> {
  const signer = privateKeyToAccount(generatePrivateKey());
  await addSigner(on, license.clientId, signer.address, expiresAt);
  return signer;
}

type Form = Record<string, string>;

/** Calls a route handler the way HTTP clients do: form body (default), query with empty body, or GET. */
export function call(
  route: "generate_challenge" | "submit_challenge",
  params: Form,
  as: "form" | "query" | "get" = "form",
): Promise<Response> {
  const url = new URL(`${ISSUER}/auth/web3/${route}`);
  const form = new URLSearchParams(params);
  if (as !== "form") url.search = form.toString();
  const init: RequestInit =
    as === "form"
      ? { method: "POST", body: form.toString(), headers: { "content-type": "application/x-www-form-urlencoded" } }
      : { method: as === "get" ? "GET" : "POST" };
  const request = new Request(url, init);
  if (route === "submit_challenge") return submitChallengeRoute(request);
  return as === "get" ? generateChallengeGet(request) : generateChallengeRoute(request);
}

export function challengeParams(license: License, overrides: Form = {}): Form {
  return {
    client_id: license.clientId,
    domain: license.domain,
    scope: "openid email",
    response_type: "code",
    address: license.clientId,
    ...overrides,
  };
}

export async function requestChallenge(license: License, overrides: Form = {}): Promise<{ state: string; challenge: string }> {
  const response = await call("generate_challenge", challengeParams(license, overrides));
  if (response.status !== 200) throw new Error(`generate_challenge: ${response.status} ${await response.text()}`);
  return response.json();
}

/** submit_challenge's parameters for a signed challenge. */
export function submitParams(license: License, state: string, signature: string, overrides: Form = {}): Form {
  return { client_id: license.clientId, state, grant_type: "authorization_code", domain: license.domain, signature, ...overrides };
}

export async function submit(license: License, state: string, signature: string, overrides: Form = {}): Promise<Response> {
  return call("submit_challenge", submitParams(license, state, signature, overrides));
}

/** Expects the documented error body: OAuth's and the platform SDKs' shapes at once. */
export async function expectError(response: Response, status: number, error: string) {
  const body = await response.json();
  const { expect } = await import("vitest");
  expect(response.status).toBe(status);
  expect(body).toEqual({ error, error_description: expect.any(String), status, message: body.error_description });
  expect(response.headers.get("cache-control")).toBe("no-store");
  return body as { error_description: string };
}
