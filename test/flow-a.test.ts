/**
 * Flow A through the real route handlers, a real PostgreSQL and real signatures from viem accounts.
 */
import { createLocalJWKSet, decodeJwt, decodeProtectedHeader, jwtVerify, type JSONWebKeySet } from "jose";
import { getAddress } from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { parseSiweMessage } from "viem/siwe";
import { beforeAll, describe, expect, it, vi } from "vitest";
import { revokeSigner, setClientEnabled } from "@/lib/clients/registry";
import { createKeyfob, type Keyfob } from "@/lib/keyfob";
import { opaqueDigest } from "@/lib/oauth/opaque";
import { keyfob } from "@/lib/runtime";
import { accessTokenHash } from "@/lib/tokens/issue";
import { encodeSubject } from "@/lib/tokens/sub";
import {
  call,
  challengeParams,
  enableSigner,
  expectError,
  ISSUER,
  registerLicense,
  requestChallenge,
  submit,
  submitParams,
  type License,
} from "./support/flow-a";
import { tables } from "./support/database";
import { route } from "./support/routes";

const discovery = route("/.well-known/openid-configuration");
const jwksAlias = route("/.well-known/jwks.json");
const keysRoute = route("/keys");

let jwks: ReturnType<typeof createLocalJWKSet>;

async function fetchJwks() {
  const response = await keysRoute(new Request("http://localhost/keys"));
  return createLocalJWKSet((await response.json()) as JSONWebKeySet);
}

/** Runs Flow A for `license` signed by `account` (default: the license's owner) for `address` (default: the license). */
async function handshake(license: License, account = license.owner, overrides: Record<string, string> = {}) {
  const { state, challenge } = await requestChallenge(license, overrides);
  return submit(license, state, await account.signMessage({ message: challenge }));
}

/** submit_challenge answered by instance `k` rather than the process-wide one. */
function submitOn(k: Keyfob, license: License, state: string, signature: string) {
  return route(
    "/auth/web3/submit_challenge",
    () => k,
  )(
    new Request(`${ISSUER}/auth/web3/submit_challenge`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams(submitParams(license, state, signature)),
    }),
  );
}

beforeAll(async () => {
  await keyfob().keys.refresh();
  jwks = await fetchJwks();
});

describe("generate_challenge", () => {
  it("returns a state and the EIP-4361 challenge in the platform's layout", async () => {
    const license = await registerLicense();
    const lower = license.clientId.toLowerCase();
    const before = Math.floor(Date.now() / 1000);
    const response = await call("generate_challenge", challengeParams(license, { address: lower }));
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/^application\/json/);
    expect(response.headers.get("cache-control")).toBe("no-store");
    const body = await response.json();
    expect(Object.keys(body)).toEqual(["state", "challenge"]);
    expect(body.state).toMatch(/^[A-Za-z0-9_-]{43}$/); // 256 bits, URL-safe

    const lines = body.challenge.split("\n");
    expect(lines).toHaveLength(10);
    expect(lines[0]).toBe("localhost:3000 wants you to sign in with your Ethereum account:");
    expect(lines[1]).toBe(getAddress(lower));
    expect(lines.slice(2, 8)).toEqual([
      "",
      `app-${lower.slice(2, 10)}.example.com is asking you sign in.`,
      "",
      `URI: ${ISSUER}`,
      "Version: 1",
      "Chain ID: 1",
    ]);
    expect(lines[8]).toMatch(/^Nonce: [0-9a-zA-Z]{30}$/);
    expect(lines[9]).toMatch(/^Issued At: \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    const issuedAt = parseSiweMessage(body.challenge).issuedAt!.getTime() / 1000;
    expect(issuedAt).toBeGreaterThanOrEqual(before - 1);
    expect(issuedAt).toBeLessThanOrEqual(Date.now() / 1000);
  });

  it("reads parameters from the query with an empty body, from GET, and from a form body", async () => {
    const license = await registerLicense();
    for (const as of ["query", "get", "form"] as const) {
      const response = await call("generate_challenge", challengeParams(license), as);
      expect(response.status, as).toBe(200);
    }
  });

  it("accepts scope written with +, %20 or a raw space", async () => {
    const license = await registerLicense();
    const base = `${ISSUER}/auth/web3/generate_challenge`;
    const rest = `client_id=${license.clientId}&domain=${encodeURIComponent(license.domain)}&response_type=code&address=${license.clientId}`;
    const POST = route("/auth/web3/generate_challenge");
    const form = { "content-type": "application/x-www-form-urlencoded" };
    const requests = [
      new Request(`${base}?scope=openid+email&${rest}`, { method: "POST" }),
      new Request(`${base}?scope=openid%20email&${rest}`, { method: "POST" }),
      new Request(base, { method: "POST", headers: form, body: `scope=openid email&${rest}` }),
      new Request(base, { method: "POST", headers: form, body: `scope=openid+email&${rest}` }),
    ];
    for (const request of requests) expect((await POST(request)).status).toBe(200);
  });

  it.each([
    ["client_id missing", { client_id: "" }, 400, "invalid_request"],
    ["domain missing", { domain: "" }, 400, "invalid_request"],
    ["scope missing", { scope: "" }, 400, "invalid_request"],
    ["response_type missing", { response_type: "" }, 400, "invalid_request"],
    ["address missing", { address: "" }, 400, "invalid_request"],
    ["unknown client", { client_id: "0x0000000000000000000000000000000000000001" }, 401, "invalid_client"],
    ["unregistered domain", { domain: "https://evil.example.com/callback" }, 400, "invalid_request"],
    ["scope without openid", { scope: "email" }, 400, "invalid_scope"],
    ["unsupported scope", { scope: "openid admin" }, 400, "invalid_scope"],
    ["response_type token", { response_type: "token" }, 400, "unsupported_response_type"],
    ["address not hex", { address: "0xzz9fd6e51aad88f6f4ce6ab8827279cfffb92266" }, 400, "invalid_request"],
    ["address too short", { address: "0xf39fd6e51aad88f6f4ce6ab8827279cfffb922" }, 400, "invalid_request"],
  ])("refuses %s", async (_, overrides, status, error) => {
    const license = await registerLicense();
    await expectError(await call("generate_challenge", challengeParams(license, overrides)), status, error);
  });

  it("matches the domain exactly, not by prefix or trailing slash", async () => {
    const license = await registerLicense({ domain: "https://exact.example.com/callback" });
    for (const domain of [
      "https://exact.example.com/callback/",
      "https://exact.example.com/callbackx",
      "https://EXACT.example.com/callback",
    ]) {
      await expectError(await call("generate_challenge", challengeParams(license, { domain })), 400, "invalid_request");
    }
  });

  it("refuses a disabled client with 401", async () => {
    const license = await registerLicense();
    await setClientEnabled(keyfob().store, license.clientId, false);
    await expectError(await call("generate_challenge", challengeParams(license)), 401, "invalid_client");
  });

  it("refuses a body over 16 KiB with 413 and a JSON body with 415", async () => {
    const license = await registerLicense();
    const params = new URLSearchParams({ ...challengeParams(license), padding: "x".repeat(16 * 1024) });
    const POST = route("/auth/web3/generate_challenge");
    const form = { "content-type": "application/x-www-form-urlencoded" };
    await expectError(
      await POST(new Request(`${ISSUER}/auth/web3/generate_challenge`, { method: "POST", headers: form, body: params.toString() })),
      413,
      "invalid_request",
    );
    const json = new Request(`${ISSUER}/auth/web3/generate_challenge`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(challengeParams(license)),
    });
    await expectError(await POST(json), 415, "invalid_request");
  });
});

describe("submit_challenge", () => {
  it("returns tokens that verify against /keys and carry the platform's claims", async () => {
    const license = await registerLicense();
    const before = Math.floor(Date.now() / 1000);
    const response = await handshake(license);
    expect(response.status).toBe(200);
    expect(response.headers.get("cache-control")).toBe("no-store");
    const body = await response.json();
    expect(Object.keys(body)).toEqual(["access_token", "token_type", "expires_in", "id_token"]);
    expect(body.token_type).toBe("bearer");
    expect(body.expires_in).toBe(1209600);

    const expected = {
      iss: ISSUER,
      sub: encodeSubject({ userId: license.clientId, connector: "web3" }),
      aud: license.clientId,
      provider_id: "web3",
      ethereum_address: license.clientId,
      email_verified: false,
    };
    // The access token is typed at+jwt (RFC 9068), the ID token as the platform's tokens always were.
    expect(decodeProtectedHeader(body.access_token)).toEqual({ alg: "RS256", kid: expect.stringMatching(/^[0-9a-f]{40}$/), typ: "at+jwt" });
    expect(decodeProtectedHeader(body.id_token)).toEqual({ alg: "RS256", kid: expect.stringMatching(/^[0-9a-f]{40}$/) });
    await jwtVerify(body.access_token, jwks, { typ: "at+jwt", requiredClaims: ["client_id"] });
    await expect(jwtVerify(body.id_token, jwks, { typ: "at+jwt" })).rejects.toThrow(/typ/); // a resource server can tell them apart
    for (const token of [body.access_token, body.id_token]) {
      const { payload } = await jwtVerify(token, jwks, { issuer: ISSUER, audience: license.clientId });
      expect(payload).toMatchObject(expected);
      expect(typeof payload.aud).toBe("string");
      expect(payload.iat).toBeGreaterThanOrEqual(before);
      expect(payload.exp).toBe(payload.iat! + 1209600);
      expect(payload.jti).toEqual(expect.any(String));
    }
    const { payload: idClaims } = await jwtVerify(body.id_token, jwks);
    expect(idClaims.at_hash).toBe(accessTokenHash(body.access_token));
  });

  it("gives the ID token its own lifetime when ID_TOKEN_TTL is set; expires_in stays the access token's", async () => {
    const shortId = createKeyfob({ ...keyfob().config, idTokenTtl: 300, recoveryThreads: 0 }, keyfob().store);
    const license = await registerLicense();
    const { state, challenge } = await requestChallenge(license);
    const signature = await license.owner.signMessage({ message: challenge });
    const response = await submitOn(shortId, license, state, signature);
    const body = await response.json();
    expect(body.expires_in).toBe(1209600);
    const [access, id] = [decodeJwt(body.access_token), decodeJwt(body.id_token)];
    expect(access.exp! - access.iat!).toBe(1209600);
    expect(id.exp! - id.iat!).toBe(300);
  });

  it("issues tokens to a user's own wallet (address other than client_id)", async () => {
    const license = await registerLicense();
    const user = privateKeyToAccount(generatePrivateKey());
    const response = await handshake(license, user, { address: user.address.toLowerCase(), scope: "openid" });
    expect(response.status).toBe(200);
    const { payload } = await jwtVerify((await response.json()).access_token, jwks);
    expect(payload.sub).toBe(encodeSubject({ userId: user.address, connector: "web3" }));
    expect(payload.aud).toBe(license.clientId);
    expect(payload.ethereum_address).toBeUndefined(); // only with the email scope
    expect(payload.email_verified).toBe(false);
  });

  it("bounds what a request can make Keyfob store or sign: nonce and state up to 512 bytes", async () => {
    const license = await registerLicense();
    const long = await expectError(
      await call("generate_challenge", challengeParams(license, { nonce: "n".repeat(16 * 1024 - 400) })),
      400,
      "invalid_request",
    );
    expect(long.error_description).toBe("parameter nonce must not exceed 512 bytes");
    expect((await call("generate_challenge", challengeParams(license, { nonce: "n".repeat(512) }))).status).toBe(200);
    await expectError(await call("generate_challenge", challengeParams(license, { nonce: "é".repeat(257) })), 400, "invalid_request"); // bytes, not characters
    const { challenge } = await requestChallenge(license);
    await expectError(
      await submit(license, "s".repeat(513), await license.owner.signMessage({ message: challenge })),
      400,
      "invalid_request",
    );
  });

  it("carries the nonce given with the challenge request", async () => {
    const license = await registerLicense();
    const response = await handshake(license, license.owner, { nonce: "n-0S6_WzA2Mj" });
    const { payload } = await jwtVerify((await response.json()).id_token, jwks);
    expect(payload.nonce).toBe("n-0S6_WzA2Mj");
  });

  it("accepts an enabled signer of the license; the identity is the license", async () => {
    const license = await registerLicense();
    const signer = await enableSigner(license, new Date(Date.now() + 3600_000));
    const response = await handshake(license, signer);
    expect(response.status).toBe(200);
    const { payload } = await jwtVerify((await response.json()).access_token, jwks);
    expect(payload.sub).toBe(encodeSubject({ userId: license.clientId, connector: "web3" }));
  });

  it("refuses a revoked signer, an expired signer, and a signer of another license", async () => {
    const license = await registerLicense();
    const revoked = await enableSigner(license);
    await revokeSigner(keyfob(), license.clientId, revoked.address);
    await expectError(await handshake(license, revoked), 400, "invalid_grant");

    const expired = await enableSigner(license, new Date(Date.now() + 3600_000));
    await tables(keyfob()).signer.update({
      where: { clientId_address: { clientId: license.clientId, address: expired.address } },
      data: { expiresAt: new Date(Date.now() - 1000) },
    });
    await expectError(await handshake(license, expired), 400, "invalid_grant");

    const other = await registerLicense();
    const foreign = await enableSigner(other);
    await expectError(await handshake(license, foreign), 400, "invalid_grant");
  });

  it("refuses a signer signing for an address other than its license", async () => {
    const license = await registerLicense();
    const signer = await enableSigner(license);
    const user = privateKeyToAccount(generatePrivateKey());
    await expectError(await handshake(license, signer, { address: user.address }), 400, "invalid_grant");
  });

  it("takes v as 0/1 as well as 27/28", async () => {
    const license = await registerLicense();
    const { state, challenge } = await requestChallenge(license);
    const signature = await license.owner.signMessage({ message: challenge });
    const v = parseInt(signature.slice(-2), 16) - 27;
    const response = await submit(license, state, `${signature.slice(0, -2)}0${v}`);
    expect(response.status).toBe(200);
  });

  it("keeps the state usable after a refused submission (nothing is consumed before verification)", async () => {
    const license = await registerLicense();
    const { state, challenge } = await requestChallenge(license);
    const stranger = privateKeyToAccount(generatePrivateKey());
    await expectError(await submit(license, state, await stranger.signMessage({ message: challenge })), 400, "invalid_grant");
    await expectError(await submit(license, state, "0x1234"), 400, "invalid_request");
    expect((await submit(license, state, await license.owner.signMessage({ message: challenge }))).status).toBe(200);
  });

  it("refuses a replayed state", async () => {
    const license = await registerLicense();
    const { state, challenge } = await requestChallenge(license);
    const signature = await license.owner.signMessage({ message: challenge });
    expect((await submit(license, state, signature)).status).toBe(200);
    const body = await expectError(await submit(license, state, signature), 400, "invalid_grant");
    expect(body.error_description).toMatch(/already been used/);
  });

  it("refuses an expired state", async () => {
    const license = await registerLicense();
    const { state, challenge } = await requestChallenge(license);
    await tables(keyfob()).challenge.update({ where: { stateHash: opaqueDigest(state) }, data: { expiresAt: new Date(Date.now() - 1) } });
    const body = await expectError(
      await submit(license, state, await license.owner.signMessage({ message: challenge })),
      400,
      "invalid_grant",
    );
    expect(body.error_description).toMatch(/expired/);
  });

  it("expires states after CHALLENGE_TTL (10 minutes by default)", async () => {
    const license = await registerLicense();
    const { state } = await requestChallenge(license);
    const row = await tables(keyfob()).challenge.findUniqueOrThrow({ where: { stateHash: opaqueDigest(state) } });
    expect(row.expiresAt.getTime() - Date.now()).toBeGreaterThan(590_000);
    expect(row.expiresAt.getTime() - Date.now()).toBeLessThanOrEqual(600_000);
  });

  it("refuses a state used with another client or another domain", async () => {
    const license = await registerLicense();
    const other = await registerLicense();
    const { state, challenge } = await requestChallenge(license);
    const signature = await license.owner.signMessage({ message: challenge });
    await expectError(await submit(license, state, signature, { client_id: other.clientId }), 400, "invalid_grant");
    await expectError(await submit(license, state, signature, { domain: other.domain }), 400, "invalid_grant");
    expect((await submit(license, state, signature)).status).toBe(200);
  });

  it("refuses a client disabled between challenge and submission", async () => {
    const license = await registerLicense();
    const { state, challenge } = await requestChallenge(license);
    await setClientEnabled(keyfob().store, license.clientId, false);
    await expectError(await submit(license, state, await license.owner.signMessage({ message: challenge })), 401, "invalid_client");
  });

  it.each([
    ["grant_type other", { grant_type: "client_credentials" }, 400, "unsupported_grant_type"],
    ["grant_type missing", { grant_type: "" }, 400, "invalid_request"],
    ["signature missing", { signature: "" }, 400, "invalid_request"],
    ["state missing", { state: "" }, 400, "invalid_request"],
    ["unknown state", { state: "bm90LWEtc3RhdGU" }, 400, "invalid_grant"],
    ["signature not hex", { signature: "0xnothex" }, 400, "invalid_request"],
  ])("refuses %s", async (_, overrides, status, error) => {
    const license = await registerLicense();
    const { state, challenge } = await requestChallenge(license);
    const signature = await license.owner.signMessage({ message: challenge });
    await expectError(await submit(license, state, signature, overrides), status, error);
  });

  it("refuses a long (contract-style) signature without a chain configured, without crashing", async () => {
    const license = await registerLicense();
    const { state } = await requestChallenge(license);
    await expectError(await submit(license, state, `0x${"5a".repeat(4000)}`), 400, "invalid_grant");
  });

  it("reads the challenge back only where it was not issued, or when the statement refuses", async () => {
    const other = createKeyfob({ ...keyfob().config, recoveryThreads: 0 }, keyfob().store);
    const reads = vi.spyOn(keyfob().store.challenges, "find");
    try {
      const license = await registerLicense();
      const signer = await enableSigner(license);
      // Issued here, submitted here: the message is remembered, one statement consumes the state.
      let { state, challenge } = await requestChallenge(license);
      expect((await submit(license, state, await signer.signMessage({ message: challenge }))).status).toBe(200);
      expect(reads).not.toHaveBeenCalled();
      // Issued here, submitted to another instance: it reads the stored challenge.
      ({ state, challenge } = await requestChallenge(license));
      expect((await submitOn(other, license, state, await signer.signMessage({ message: challenge }))).status).toBe(200);
      expect(reads).toHaveBeenCalledTimes(1);
      // A signer revoked after the challenge was issued: the statement refuses, the stored challenge says why.
      ({ state, challenge } = await requestChallenge(license));
      await revokeSigner(keyfob(), license.clientId, signer.address);
      const body = await expectError(await submit(license, state, await signer.signMessage({ message: challenge })), 400, "invalid_grant");
      expect(body.error_description).toMatch(/signature/);
      expect(reads).toHaveBeenCalledTimes(2);
      // Nothing was consumed: the license's own key still redeems the state.
      expect((await submit(license, state, await license.owner.signMessage({ message: challenge }))).status).toBe(200);
    } finally {
      reads.mockRestore();
      await other.close();
    }
  });

  it("gives tokens to exactly one of 50 concurrent submissions of one state", async () => {
    const license = await registerLicense();
    const { state, challenge } = await requestChallenge(license);
    const signature = await license.owner.signMessage({ message: challenge });
    const responses = await Promise.all(Array.from({ length: 50 }, () => submit(license, state, signature)));
    const statuses = responses.map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    expect(statuses.filter((s) => s === 400)).toHaveLength(49);
    for (const r of responses.filter((r) => r.status === 400)) expect((await r.json()).error).toBe("invalid_grant");
  });
});

describe("audit", () => {
  it("records each token issuance and failure with client, account and outcome", async () => {
    const license = await registerLicense();
    const { state, challenge } = await requestChallenge(license);
    await submit(license, state, `0x${"11".repeat(65)}`);
    await submit(license, state, await license.owner.signMessage({ message: challenge }));
    await keyfob().audit.flush();
    // The issuance is written with the token, the failure from the buffer: in either order.
    const events = await tables(keyfob()).auditEvent.findMany({ where: { clientId: license.clientId }, orderBy: { action: "asc" } });
    expect(events.map((e) => [e.action, e.outcome, e.detail, e.accountId])).toEqual([
      ["token.failed", "invalid_grant", expect.stringMatching(/^submit_challenge: the signature does not match/), null],
      ["token.issued", "success", "submit_challenge", license.clientId],
    ]);
  });
});

describe("keys and discovery", () => {
  it("publishes the public signing keys at /keys and /.well-known/jwks.json, cacheable, without private parts", async () => {
    for (const [route, path] of [
      [keysRoute, "/keys"],
      [jwksAlias, "/.well-known/jwks.json"],
    ] as const) {
      const response = await route(new Request(`http://localhost${path}`));
      expect(response.status).toBe(200);
      expect(response.headers.get("cache-control")).toBe("public, max-age=300");
      const { keys } = await response.json();
      expect(keys.length).toBeGreaterThanOrEqual(1);
      expect(keys.some((key: { alg: string }) => key.alg === "RS256")).toBe(true);
      // RS256 keys, and PS256/ES256 ones once a client asked for one (the database is shared): public members only.
      for (const key of keys) {
        const members = { RS256: ["e", "n"], PS256: ["e", "n"], ES256: ["crv", "x", "y"] }[key.alg as string];
        expect(members, key.alg).toBeDefined();
        expect(Object.keys(key).sort()).toEqual(["alg", "kid", "kty", "use", ...members!].sort());
        expect(key).toMatchObject({ kty: key.alg === "ES256" ? "EC" : "RSA", use: "sig" });
      }
    }
  });

  it("advertises only what is implemented", async () => {
    const response = await discovery(new Request("http://localhost/.well-known/openid-configuration"));
    const doc = await response.json();
    expect(doc.issuer).toBe(ISSUER);
    expect(doc.jwks_uri).toBe(`${ISSUER}/keys`);
    expect(doc.id_token_signing_alg_values_supported).toEqual(["RS256", "PS256", "ES256"]);
    expect(doc.scopes_supported).toEqual(["openid", "email", "profile", "offline_access"]);
    expect(doc.grant_types_supported).toEqual([
      "authorization_code",
      "refresh_token",
      "client_credentials",
      "urn:ietf:params:oauth:grant-type:device_code",
      "urn:ietf:params:oauth:grant-type:token-exchange",
    ]);
    expect(doc.end_session_endpoint).toBe(`${ISSUER}/session/end`);
    expect(doc.response_types_supported).toEqual(["code"]);
  });
});
