/**
 * The Flow A client library (packages/flow-a-client, @keyfob/flow-a-client) signs only a fresh Flow A challenge
 * from the Keyfob it asked: a hostile or mistyped authUrl cannot use it as a signing oracle. The
 * server here is a stand-in that answers whatever each test makes it answer, and records what it
 * was sent: a proxy's answer that Keyfob never gives (a Retry-After date) is made here too, and an
API (another resource server) that asks for its own DPoP nonce.
 */
import { createHash } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { decodeJwt } from "jose";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { createSiweMessage } from "viem/siwe";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkChallenge, createFlowAClient, generateDPoPKeyPair, getToken, KeyfobError, UnsafeChallengeError } from "@keyfob/flow-a-client";
import { createChallengeMessage } from "@/lib/siwe/challenge";
import { SIWE_PURPOSE } from "@/lib/siwe/purpose";

const license = privateKeyToAccount(generatePrivateKey());
const domain = "https://fleet.example.com/callback";
let authUrl: string;
let challengeFor: (issuer: string) => string;
const submitted: string[] = [];
/** When set, generate_challenge is answered with this status and headers, and no body. */
let refusal: { status: number; headers: Record<string, string> } | undefined;
/** What /api was sent: each request's DPoP proof and body. */
const apiRequests: { dpop: string; authorization: string; body: string }[] = [];
const API_NONCE = "api-nonce-1";
let server: http.Server;

beforeAll(async () => {
  server = http.createServer((request, response) => {
    let body = "";
    request.on("data", (chunk) => (body += chunk));
    request.on("end", () => {
      if (refusal) {
        response.writeHead(refusal.status, refusal.headers).end();
      } else if (request.url!.startsWith("/api?")) {
        const dpop = String(request.headers.dpop);
        apiRequests.push({ dpop, authorization: String(request.headers.authorization), body });
        const fresh = decodeJwt(dpop).nonce === API_NONCE;
        const nonceChallenge = { "www-authenticate": `DPoP error="use_dpop_nonce"`, "dpop-nonce": API_NONCE };
        response.writeHead(fresh ? 200 : 401, fresh ? {} : nonceChallenge).end();
      } else if (request.url!.endsWith("/generate_challenge")) {
        response
          .writeHead(200, { "content-type": "application/json" })
          .end(JSON.stringify({ state: "s".repeat(43), challenge: challengeFor(authUrl) }));
      } else {
        submitted.push(body);
        const tokenType = request.headers.dpop ? "DPoP" : "bearer";
        response
          .writeHead(200, { "content-type": "application/json" })
          .end(JSON.stringify({ access_token: "a", token_type: tokenType, expires_in: 1, id_token: "i" }));
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "localhost", resolve));
  authUrl = `http://localhost:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise((resolve) => server.close(resolve)));

const flowA = (issuer: string, overrides: Partial<Parameters<typeof createChallengeMessage>[0]> = {}) =>
  createChallengeMessage({
    issuerUrl: issuer,
    domain,
    address: license.address,
    chainId: 1,
    nonce: "a".repeat(30),
    issuedAt: new Date(),
    ...overrides,
  });

const options = () => ({ authUrl, clientId: license.address, domain, privateKey: generatePrivateKey() });

describe("getToken", () => {
  it("signs and submits a fresh Flow A challenge from the Keyfob it asked", async () => {
    challengeFor = (issuer) => flowA(issuer);
    const before = submitted.length;
    await expect(getToken(options())).resolves.toMatchObject({ token_type: "bearer" });
    expect(submitted).toHaveLength(before + 1);
  });

  const hostile: [string, (issuer: string) => string][] = [
    [
      "Keyfob's hosted-login message (a relayed login)",
      (issuer) =>
        createSiweMessage({
          domain: new URL(issuer).host,
          address: license.address,
          uri: issuer,
          version: "1",
          chainId: 1,
          nonce: "b".repeat(30),
          issuedAt: new Date(),
          resources: [SIWE_PURPOSE.login],
        }),
    ],
    ["another site's challenge", () => flowA("https://auth.elsewhere.example")],
    ["a challenge for another address", (issuer) => flowA(issuer, { address: privateKeyToAccount(generatePrivateKey()).address })],
    ["a challenge for another chain", (issuer) => flowA(issuer, { chainId: 137 })],
    ["a challenge for another domain", (issuer) => flowA(issuer, { domain: "https://evil.example.com/cb" })],
    ["a stale challenge", (issuer) => flowA(issuer, { issuedAt: new Date(Date.now() - 3600_000) })],
    ["a challenge with a line added", (issuer) => `${flowA(issuer)}\nResources:\n- https://evil.example.com`],
    ["any other text", () => "Transfer all my funds"],
  ];
  for (const [name, make] of hostile) {
    it(`refuses to sign ${name}, and submits nothing`, async () => {
      challengeFor = make;
      const before = submitted.length;
      await expect(getToken(options())).rejects.toBeInstanceOf(UnsafeChallengeError);
      expect(submitted).toHaveLength(before);
    });
  }

  it("refuses a plain-http authUrl other than localhost before sending anything", async () => {
    await expect(getToken({ ...options(), authUrl: "http://auth.example.com" })).rejects.toThrow(/authUrl must use https/);
  });

  it("checks the chain it is told, and accepts the challenge's own time within five minutes", () => {
    const issuer = "https://auth.example.com";
    expect(() =>
      checkChallenge(flowA(issuer, { chainId: 137 }), { authUrl: issuer, domain, address: license.address, chainId: 137 }),
    ).not.toThrow();
    const now = new Date(Date.now() + 4 * 60_000);
    expect(() => checkChallenge(flowA(issuer), { authUrl: issuer, domain, address: license.address, chainId: 1, now })).not.toThrow();
  });

  it("needs the address with a signing function when the client id is no address, and sends nothing", async () => {
    const before = submitted.length;
    const sign = () => Promise.reject(new Error("not asked"));
    await expect(getToken({ authUrl, clientId: "kf_app", domain, signer: sign })).rejects.toThrow(/address is needed/);
    expect(submitted).toHaveLength(before);
  });

  it("reads Retry-After as seconds or as a date, on an answer without Keyfob's body", async () => {
    try {
      refusal = { status: 503, headers: { "retry-after": new Date(Date.now() + 30_000).toUTCString() } };
      const unavailable = await getToken(options()).catch((error: unknown) => error);
      expect(unavailable).toBeInstanceOf(KeyfobError);
      expect(unavailable).toMatchObject({ status: 503, error: "http_error", error_description: "Service Unavailable" });
      expect((unavailable as KeyfobError).retryAfter).toBeGreaterThanOrEqual(29);
      expect((unavailable as KeyfobError).retryAfter).toBeLessThanOrEqual(30);
      refusal = { status: 429, headers: { "retry-after": "7" } };
      await expect(getToken(options())).rejects.toMatchObject({ status: 429, retryAfter: 7 });
    } finally {
      refusal = undefined;
    }
  });
});

describe("createFlowAClient's fetch with DPoP", () => {
  it("retries an API's use_dpop_nonce once with its nonce, sending the same body, each proof for the token", async () => {
    challengeFor = (issuer) => flowA(issuer);
    const client = createFlowAClient({ ...options(), dpop: await generateDPoPKeyPair() });
    const response = await client.fetch(`${authUrl}/api?page=2`, { method: "POST", body: "reading" });
    expect(response.status).toBe(200);
    expect(apiRequests).toHaveLength(2);
    const ath = createHash("sha256").update("a").digest("base64url");
    const [first, retry] = apiRequests.map((sent) => ({ ...sent, proof: decodeJwt(sent.dpop) }));
    for (const sent of [first, retry]) {
      expect(sent).toMatchObject({ authorization: "DPoP a", body: "reading", proof: { htm: "POST", htu: `${authUrl}/api`, ath } });
    }
    expect(first.proof.nonce).toBeUndefined();
    expect(retry.proof.nonce).toBe(API_NONCE);
    expect(retry.proof.jti).not.toBe(first.proof.jti);
  });
});
