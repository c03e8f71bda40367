/**
 * DPoP (RFC 9449) on the real route handlers, a real PostgreSQL and real signatures: Flow A's
 * submit_challenge and every /token grant bind the access token to the proof's key (cnf.jkt,
 * token_type DPoP); /userinfo then wants the token as `Authorization: DPoP` with a proof of that
 * key for it (ath), and refuses it as Bearer; the proof's checks (RFC 9449 4.3), replays refused
 * across two server processes, server nonces, codes bound by dpop_jkt or by a proof at /par, public clients' refresh tokens bound to the key, clients
 * required to use DPoP, introspection's cnf, discovery and the sweep of old proofs.
 */
import { randomUUID } from "node:crypto";
import { ALL_SCOPES } from "@/lib/admin/access";
import { calculateJwkThumbprint, decodeJwt, exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWTPayload } from "jose";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { updateClient as changeClient } from "@/lib/admin/operations";
import { updateClient } from "@/lib/clients/registry";
import { sweepExpired } from "@/lib/housekeeping";
import { createKeyfob } from "@/lib/keyfob";
import { accessTokenDigest, dpopNonce } from "@/lib/oauth/dpop";
import { keyfob } from "@/lib/runtime";
import { tables } from "./support/database";
import { challengeParams, expectError, ISSUER, registerLicense, requestChallenge, submitParams, type License } from "./support/flow-a";
import { authorize, authorizeQuery, basic, registerApp, tokenRequest, type App } from "./support/flow-b";
import { startProtocolProcess, type ProtocolProcess } from "./support/protocol-process";
import { formPost, routesOn, route } from "./support/routes";

const discoveryRoute = route("/.well-known/openid-configuration");
const introspectRoute = route("/token/introspect");
const tokenRoute = route("/token");
const parRoute = route("/par");
const userinfoGet = route("/userinfo");

type Key = { privateKey: CryptoKey; publicKey: CryptoKey; jkt: string };

async function newKey(alg = "ES256"): Promise<Key> {
  const { privateKey, publicKey } = await generateKeyPair(alg);
  return { privateKey, publicKey, jkt: await calculateJwkThumbprint(await exportJWK(publicKey)) };
}

/** A DPoP proof (RFC 9449 4.2) by `key` for `htm` `htu`; `claims` and `header` override what a client would send. */
async function proof(key: Key, htm: string, htu: string, claims: JWTPayload = {}, header: Record<string, unknown> = {}) {
  return new SignJWT({ htm, htu, jti: randomUUID(), iat: Math.floor(Date.now() / 1000), ...claims })
    .setProtectedHeader({ alg: "ES256", typ: "dpop+jwt", jwk: await exportJWK(key.publicKey), ...header })
    .sign(key.privateKey);
}

const SUBMIT = `${ISSUER}/auth/web3/submit_challenge`;
const TOKEN = `${ISSUER}/token`;
const PAR = `${ISSUER}/par`;
const USERINFO = `${ISSUER}/userinfo`;

/** Flow A for `license`, its submit_challenge sent with `headers` (a DPoP proof) to `route`. */
async function flowA(license: License, headers: Record<string, string>, route = routesOn(keyfob()).submitChallenge) {
  const { state, challenge } = await requestChallenge(license);
  const signature = await license.owner.signMessage({ message: challenge });
  return route(formPost("/auth/web3/submit_challenge", submitParams(license, state, signature), headers));
}

function userinfo(authorization: string, dpop?: string, on = userinfoGet) {
  return on(new Request(USERINFO, { headers: { authorization, ...(dpop && { dpop }) } }));
}

/** A proof for /userinfo carrying the access token's hash. */
const userinfoProof = (key: Key, accessToken: string, claims: JWTPayload = {}) =>
  proof(key, "GET", USERINFO, { ath: accessTokenDigest(accessToken), ...claims });

describe("Flow A with DPoP", () => {
  it("binds the token to the proof's key; /userinfo refuses it without a proof of that key (issue 21's done-when)", async () => {
    const key = await newKey();
    const response = await flowA(await registerLicense(), { dpop: await proof(key, "POST", SUBMIT) });
    expect(response.status).toBe(200);
    expect(response.headers.get("dpop-nonce")).toBe(dpopNonce(keyfob()));
    const body = await response.json();
    expect(Object.keys(body)).toEqual(["access_token", "token_type", "expires_in", "id_token"]);
    expect(body.token_type).toBe("DPoP");
    const token: string = body.access_token;
    expect(decodeJwt(token).cnf).toEqual({ jkt: key.jkt });

    // Stolen: as Bearer, as DPoP without a proof, with a proof by another key, or without ath.
    const bearer = await userinfo(`Bearer ${token}`);
    expect(bearer.status).toBe(401);
    expect(bearer.headers.get("www-authenticate")).toMatch(/^DPoP error="invalid_token", .*algs="ES256 /);
    await expectError(await userinfo(`DPoP ${token}`), 401, "invalid_dpop_proof");
    await expectError(await userinfo(`DPoP ${token}`, await userinfoProof(await newKey(), token)), 401, "invalid_dpop_proof");
    const noAth = await userinfo(`DPoP ${token}`, await proof(key, "GET", USERINFO));
    expect(noAth.headers.get("www-authenticate")).toMatch(/^DPoP error="invalid_dpop_proof"/);
    await expectError(noAth, 401, "invalid_dpop_proof");

    // The holder of the key.
    const dpop = await userinfoProof(key, token);
    const info = await userinfo(`DPoP ${token}`, dpop);
    expect(info.status).toBe(200);
    expect((await info.json()).sub).toBe(decodeJwt(token).sub);
    // A proof is good once.
    await expectError(await userinfo(`DPoP ${token}`, dpop), 401, "invalid_dpop_proof");
  });

  it("answers exactly as before without a DPoP header: bearer, no DPoP-Nonce", async () => {
    const response = await flowA(await registerLicense(), {});
    expect(response.status).toBe(200);
    expect(response.headers.get("dpop-nonce")).toBeNull();
    const body = await response.json();
    expect(body.token_type).toBe("bearer");
    expect(decodeJwt(body.access_token).cnf).toBeUndefined();
    expect((await userinfo(`Bearer ${body.access_token}`)).status).toBe(200);
    // An unbound token is a bearer token: not presented as DPoP.
    await expectError(await userinfo(`DPoP ${body.access_token}`), 401, "invalid_token");
  });

  it("refuses Flow A without a proof for a client that must use DPoP", async () => {
    const license = await registerLicense();
    await updateClient(keyfob().store, license.clientId, { dpopBoundAccessTokens: true });
    await expectError(await flowA(license, {}), 400, "invalid_dpop_proof");
    expect((await flowA(license, { dpop: await proof(await newKey(), "POST", SUBMIT) })).status).toBe(200);
  });
});

describe("the proof's checks (RFC 9449 4.3)", () => {
  const refusals: [string, (key: Key) => Promise<string>][] = [
    ["another method", (key) => proof(key, "GET", SUBMIT)],
    ["another URL", (key) => proof(key, "POST", TOKEN)],
    ["an iat too old", (key) => proof(key, "POST", SUBMIT, { iat: Math.floor(Date.now() / 1000) - 301 })],
    ["an iat in the future", (key) => proof(key, "POST", SUBMIT, { iat: Math.floor(Date.now() / 1000) + 120 })],
    ["no jti", (key) => proof(key, "POST", SUBMIT, { jti: undefined })],
    ["another typ", (key) => proof(key, "POST", SUBMIT, {}, { typ: "JWT" })],
    [
      "a private key in its header",
      async (key) =>
        proof(key, "POST", SUBMIT, {}, { jwk: await exportJWK((await generateKeyPair("ES256", { extractable: true })).privateKey) }),
    ],
    [
      "a symmetric algorithm",
      async () =>
        new SignJWT({ htm: "POST", htu: SUBMIT, jti: randomUUID(), iat: Math.floor(Date.now() / 1000) })
          .setProtectedHeader({ alg: "HS256", typ: "dpop+jwt", jwk: { kty: "oct", k: "c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0" } as never })
          .sign(new TextEncoder().encode("secretsecretsecretsecretsecretsecret")),
    ],
    ["a signature by another key", async (key) => (await proof(key, "POST", SUBMIT)).replace(/\.[^.]+$/, `.${"A".repeat(86)}`)],
    ["two proofs", async (key) => `${await proof(key, "POST", SUBMIT)}, ${await proof(key, "POST", SUBMIT)}`],
  ];
  it.each(refusals)("refuses a proof with %s, and issues nothing", async (_, make) => {
    const key = await newKey();
    await expectError(await flowA(await registerLicense(), { dpop: await make(key) }), 400, "invalid_dpop_proof");
  });

  it("compares htu without its query and fragment, and takes another asymmetric algorithm", async () => {
    const key = await newKey("EdDSA");
    const dpop = await new SignJWT({ htm: "POST", htu: `${SUBMIT}?x=1#y`, jti: randomUUID(), iat: Math.floor(Date.now() / 1000) })
      .setProtectedHeader({ alg: "EdDSA", typ: "dpop+jwt", jwk: await exportJWK(key.publicKey) })
      .sign(key.privateKey);
    const response = await flowA(await registerLicense(), { dpop });
    expect(response.status).toBe(200);
    expect(decodeJwt((await response.json()).access_token).cnf).toEqual({ jkt: key.jkt });
  });
});

describe("a proof replayed on another server", () => {
  // Two Keyfob servers in processes of their own, behind one issuer URL (as behind a load balancer).
  let servers: ProtocolProcess[] = [];
  beforeAll(async () => {
    servers = await Promise.all([startProtocolProcess({ ISSUER_URL: ISSUER }), startProtocolProcess({ ISSUER_URL: ISSUER })]);
  }, 120_000);
  afterAll(() => Promise.all(servers.map((server) => server.stop())));

  /** Flow A over HTTP, both steps on `server`, the submission with `dpop`. */
  async function flowAOn(server: ProtocolProcess, dpop: string) {
    const license = await registerLicense();
    const post = (path: string, form: Record<string, string>, headers: Record<string, string> = {}) =>
      fetch(`${server.url}${path}`, { method: "POST", body: new URLSearchParams(form), headers });
    const generated = await post("/auth/web3/generate_challenge", challengeParams(license));
    expect(generated.status).toBe(200);
    const { state, challenge } = (await generated.json()) as { state: string; challenge: string };
    const signature = await license.owner.signMessage({ message: challenge });
    return post("/auth/web3/submit_challenge", submitParams(license, state, signature), { dpop });
  }

  it("is refused: the proofs seen are shared in PostgreSQL", async () => {
    const [first, second] = servers;
    const dpop = await proof(await newKey(), "POST", SUBMIT);
    const accepted = await flowAOn(first, dpop);
    expect(accepted.status, await accepted.clone().text()).toBe(200);
    await expectError(await flowAOn(second, dpop), 400, "invalid_dpop_proof");
    // The same request with a fresh proof is served there.
    expect((await flowAOn(second, await proof(await newKey(), "POST", SUBMIT))).status).toBe(200);
  });
});

describe("server nonces (RFC 9449 8, 9)", () => {
  const strict = createKeyfob({ ...keyfob().config, dpopNonceRequired: true, recoveryThreads: 0 }, keyfob().store);
  afterAll(() => strict.close());

  it("asks for a nonce at the token endpoints (400) and at /userinfo (401), and accepts the current one", async () => {
    const key = await newKey();
    const license = await registerLicense();
    const route = routesOn(strict).submitChallenge;
    const asked = await flowA(license, { dpop: await proof(key, "POST", SUBMIT) }, route);
    const nonce = asked.headers.get("dpop-nonce")!;
    expect(nonce).toBe(dpopNonce(strict));
    await expectError(asked, 400, "use_dpop_nonce");
    await expectError(await flowA(license, { dpop: await proof(key, "POST", SUBMIT, { nonce: "stale" }) }, route), 400, "use_dpop_nonce");

    const response = await flowA(license, { dpop: await proof(key, "POST", SUBMIT, { nonce }) }, route);
    expect(response.status).toBe(200);
    const token: string = (await response.json()).access_token;

    const strictUserinfo = routesOn(strict).userinfo;
    const refused = await userinfo(`DPoP ${token}`, await userinfoProof(key, token), strictUserinfo);
    expect(refused.status).toBe(401);
    expect(refused.headers.get("www-authenticate")).toMatch(/^DPoP error="use_dpop_nonce"/);
    expect(refused.headers.get("dpop-nonce")).toBe(nonce);
    expect((await userinfo(`DPoP ${token}`, await userinfoProof(key, token, { nonce }), strictUserinfo)).status).toBe(200);
    // Nonces need no shared state: the previous period's is still good, older ones are not.
    const previous = dpopNonce(strict, Date.now() - 300_000);
    const older = dpopNonce(strict, Date.now() - 600_000);
    expect((await userinfo(`DPoP ${token}`, await userinfoProof(key, token, { nonce: previous }), strictUserinfo)).status).toBe(200);
    await expectError(
      await userinfo(`DPoP ${token}`, await userinfoProof(key, token, { nonce: older }), strictUserinfo),
      401,
      "use_dpop_nonce",
    );
  });
});

describe("a nonce the proof carries, when nonces are not required (RFC 9449 8, 9)", () => {
  /** Nonces this server did not supply, or supplied too long ago: each refused with the current one. */
  const badNonces = () => ["forged", 42, dpopNonce(keyfob(), Date.now() - 600_000)];
  const expectNonceAsked = async (response: Response, status = 400) => {
    expect(response.headers.get("dpop-nonce")).toBe(dpopNonce(keyfob()));
    await expectError(response, status, "use_dpop_nonce");
  };

  it("is checked at /token: refused unless current; a proof without one is still accepted", async () => {
    const app = await registerApp();
    const key = await newKey();
    const code = (await authorize(app)).searchParams.get("code")!;
    const redeem = async (claims: JWTPayload) => {
      const request = tokenRequest(app, { code });
      request.headers.set("dpop", await proof(key, "POST", TOKEN, claims));
      return tokenRoute(request);
    };
    for (const nonce of badNonces()) await expectNonceAsked(await redeem({ nonce }));
    expect((await redeem({ nonce: dpopNonce(keyfob()) })).status).toBe(200);
    const other = (await authorize(app)).searchParams.get("code")!;
    const request = tokenRequest(app, { code: other });
    request.headers.set("dpop", await proof(key, "POST", TOKEN));
    expect((await tokenRoute(request)).status).toBe(200);
  });

  it("is checked at /par", async () => {
    const app = await registerApp();
    const key = await newKey();
    const push = async (claims: JWTPayload) =>
      parRoute(formPost("/par", Object.fromEntries(authorizeQuery(app)), { dpop: await proof(key, "POST", PAR, claims) }));
    for (const nonce of badNonces()) await expectNonceAsked(await push({ nonce }));
    expect((await push({ nonce: dpopNonce(keyfob()) })).status).toBe(201);
    expect((await push({})).status).toBe(201);
  });

  it("is checked at submit_challenge and /userinfo", async () => {
    const key = await newKey();
    const license = await registerLicense();
    for (const nonce of badNonces()) await expectNonceAsked(await flowA(license, { dpop: await proof(key, "POST", SUBMIT, { nonce }) }));
    const response = await flowA(license, { dpop: await proof(key, "POST", SUBMIT, { nonce: dpopNonce(keyfob()) }) });
    expect(response.status).toBe(200);
    const token: string = (await response.json()).access_token;
    for (const nonce of badNonces()) {
      const refused = await userinfo(`DPoP ${token}`, await userinfoProof(key, token, { nonce }));
      expect(refused.headers.get("www-authenticate")).toMatch(/^DPoP error="use_dpop_nonce"/);
      await expectNonceAsked(refused, 401);
    }
    expect((await userinfo(`DPoP ${token}`, await userinfoProof(key, token))).status).toBe(200);
  });
});

describe("the code exchange and refresh tokens", () => {
  const OFFLINE = { scope: "openid email offline_access" };
  const exchange = async (app: App, headers: Record<string, string>) => {
    const code = (await authorize(app, undefined, OFFLINE)).searchParams.get("code")!;
    const request = tokenRequest(app, { code });
    for (const [name, value] of Object.entries(headers)) request.headers.set(name, value);
    return tokenRoute(request);
  };
  const refresh = (app: App, refreshToken: string, dpop?: string) => {
    const request = tokenRequest(app, { grant_type: "refresh_token", refresh_token: refreshToken });
    if (dpop) request.headers.set("dpop", dpop);
    return tokenRoute(request);
  };

  it("binds a public client's refresh tokens to the key: refreshing needs a proof of it", async () => {
    const app = await registerApp({ settings: { refreshTokensAllowed: true } });
    const key = await newKey();
    const response = await exchange(app, { dpop: await proof(key, "POST", TOKEN) });
    expect(response.status).toBe(200);
    const tokens = await response.json();
    expect(tokens.token_type).toBe("DPoP");
    expect(decodeJwt(tokens.access_token).cnf).toEqual({ jkt: key.jkt });

    await expectError(await refresh(app, tokens.refresh_token), 400, "invalid_grant");
    await expectError(await refresh(app, tokens.refresh_token, await proof(await newKey(), "POST", TOKEN)), 400, "invalid_grant");
    const refreshed = await refresh(app, tokens.refresh_token, await proof(key, "POST", TOKEN));
    expect(refreshed.status).toBe(200);
    const next = await refreshed.json();
    expect(next.token_type).toBe("DPoP");
    expect(decodeJwt(next.access_token).cnf).toEqual({ jkt: key.jkt });
    // The successor is bound too.
    await expectError(await refresh(app, next.refresh_token), 400, "invalid_grant");
  });

  it("within REFRESH_TOKEN_REUSE_GRACE answers a bound refresh token's reuse with the same successor only with a proof of its key", async () => {
    const graced = createKeyfob({ ...keyfob().config, refreshTokenReuseGrace: 10, recoveryThreads: 0 }, keyfob().store);
    onTestFinished(() => graced.close());
    const app = await registerApp({ settings: { refreshTokensAllowed: true } });
    const refreshOn = (refreshToken: string, dpop: string) => {
      const request = tokenRequest(app, { grant_type: "refresh_token", refresh_token: refreshToken });
      request.headers.set("dpop", dpop);
      return routesOn(graced).token(request);
    };
    const key = await newKey();
    const tokens = await (await exchange(app, { dpop: await proof(key, "POST", TOKEN) })).json();
    const first = await refreshOn(tokens.refresh_token, await proof(key, "POST", TOKEN));
    expect(first.status).toBe(200);
    const successor = (await first.json()).refresh_token;

    await expectError(await refreshOn(tokens.refresh_token, await proof(await newKey(), "POST", TOKEN)), 400, "invalid_grant");
    const again = await refreshOn(tokens.refresh_token, await proof(key, "POST", TOKEN));
    expect(again.status).toBe(200);
    const answer = await again.json();
    expect(answer.refresh_token).toBe(successor);
    expect(decodeJwt(answer.access_token).cnf).toEqual({ jkt: key.jkt });
  });

  it("leaves a confidential client's refresh tokens unbound; each access token is bound to the proof it came with", async () => {
    const app = await registerApp({ confidential: true, settings: { refreshTokensAllowed: true } });
    const tokens = await (await exchange(app, { dpop: await proof(await newKey(), "POST", TOKEN) })).json();
    const plain = await refresh(app, tokens.refresh_token);
    expect(plain.status).toBe(200);
    const next = await plain.json();
    expect(next.token_type).toBe("bearer");
    const key = await newKey();
    const bound = await (await refresh(app, next.refresh_token, await proof(key, "POST", TOKEN))).json();
    expect(bound.token_type).toBe("DPoP");
    expect(decodeJwt(bound.access_token).cnf).toEqual({ jkt: key.jkt });

    // Introspection tells a resource server the binding (RFC 9449 6.2).
    const introspected = await introspectRoute(
      new Request(`${ISSUER}/token/introspect`, {
        method: "POST",
        headers: { authorization: basic(app), "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ token: bound.access_token }),
      }),
    );
    expect(await introspected.json()).toMatchObject({ active: true, token_type: "DPoP", cnf: { jkt: key.jkt } });
  });

  it("binds the code to the dpop_jkt of the authorization request (RFC 9449 10)", async () => {
    const app = await registerApp();
    const key = await newKey();
    const bound = async (dpop?: string) => {
      const code = (await authorize(app, undefined, { dpop_jkt: key.jkt })).searchParams.get("code")!;
      const request = tokenRequest(app, { code });
      if (dpop) request.headers.set("dpop", dpop);
      return tokenRoute(request);
    };
    await expectError(await bound(), 400, "invalid_grant");
    await expectError(await bound(await proof(await newKey(), "POST", TOKEN)), 400, "invalid_grant");
    const response = await bound(await proof(key, "POST", TOKEN));
    expect(response.status).toBe(200);
    expect(decodeJwt((await response.json()).access_token).cnf).toEqual({ jkt: key.jkt });
    // Not a thumbprint: refused at the authorization endpoint, back at the redirect URI.
    const refused = await authorize(app, undefined, { dpop_jkt: "not a thumbprint" }).catch((error: Error) => error.message);
    expect(refused).toMatch(/invalid_request/);
  });

  it("refuses token requests without a proof from a client an admin requires DPoP of (dpop_bound_access_tokens)", async () => {
    const app = await registerApp({ confidential: true });
    await updateClient(keyfob().store, app.clientId, { dpopBoundAccessTokens: true });
    await expectError(await exchange(app, {}), 400, "invalid_dpop_proof");
    expect((await exchange(app, { dpop: await proof(await newKey(), "POST", TOKEN) })).status).toBe(200);
  });
});

describe("pushed authorization requests with a proof (RFC 9449 10.1)", () => {
  const push = (app: App, headers: Record<string, string>, extra: Record<string, string> = {}) =>
    parRoute(formPost("/par", Object.fromEntries(authorizeQuery(app, extra)), headers));
  /** The code of the request pushed as `request_uri`, after the user's login. */
  const codeOf = async (app: App, requestUri: string) =>
    (await authorize(app, undefined, { request_uri: requestUri })).searchParams.get("code")!;
  const redeem = (app: App, code: string, dpop?: string) => {
    const request = tokenRequest(app, { code });
    if (dpop) request.headers.set("dpop", dpop);
    return tokenRoute(request);
  };

  it("binds the code to the proof's key, as dpop_jkt does, and answers a DPoP-Nonce", async () => {
    const app = await registerApp();
    const key = await newKey();
    const pushed = await push(app, { dpop: await proof(key, "POST", PAR) });
    expect(pushed.status).toBe(201);
    expect(pushed.headers.get("dpop-nonce")).toBe(dpopNonce(keyfob()));
    const code = await codeOf(app, (await pushed.json()).request_uri);
    await expectError(await redeem(app, code), 400, "invalid_grant");
    await expectError(await redeem(app, code, await proof(await newKey(), "POST", TOKEN)), 400, "invalid_grant");
    const response = await redeem(app, code, await proof(key, "POST", TOKEN));
    expect(response.status).toBe(200);
    expect(decodeJwt((await response.json()).access_token).cnf).toEqual({ jkt: key.jkt });
  });

  it("refuses an invalid proof, and a dpop_jkt that is not the proof's key (400 invalid_dpop_proof)", async () => {
    const app = await registerApp({ confidential: true });
    const auth = { authorization: basic(app) };
    const key = await newKey();
    for (const dpop of [
      "not-a-proof",
      await proof(key, "POST", TOKEN),
      await proof(key, "GET", PAR),
      await proof(key, "POST", PAR, { iat: Math.floor(Date.now() / 1000) - 3600 }),
    ]) {
      const refused = await push(app, { ...auth, dpop });
      expect(refused.headers.get("dpop-nonce")).toBe(dpopNonce(keyfob()));
      await expectError(refused, 400, "invalid_dpop_proof");
    }
    const other = await newKey();
    const mismatch = await push(app, { ...auth, dpop: await proof(key, "POST", PAR) }, { dpop_jkt: other.jkt });
    expect((await expectError(mismatch, 400, "invalid_dpop_proof")).error_description).toMatch(/dpop_jkt/);
    // The same key named both ways is one binding.
    const same = await push(app, { ...auth, dpop: await proof(key, "POST", PAR) }, { dpop_jkt: key.jkt });
    expect(same.status).toBe(201);
    const code = await codeOf(app, (await same.json()).request_uri);
    await expectError(await redeem(app, code, await proof(other, "POST", TOKEN)), 400, "invalid_grant");
    expect((await redeem(app, code, await proof(key, "POST", TOKEN))).status).toBe(200);
  });
});

describe("client_credentials with DPoP", () => {
  it("binds the management API token; the API then wants the proof", async () => {
    const app = await registerApp({ confidential: true });
    await updateClient(keyfob().store, app.clientId, { managementApi: true, managementScopes: ["keyfob:read"] });
    const key = await newKey();
    const request = new Request(TOKEN, {
      method: "POST",
      headers: { authorization: basic(app), "content-type": "application/x-www-form-urlencoded", dpop: await proof(key, "POST", TOKEN) },
      body: new URLSearchParams({ grant_type: "client_credentials" }),
    });
    const body = await (await tokenRoute(request)).json();
    expect(body).toMatchObject({ token_type: "DPoP", scope: "keyfob:read" });
    expect(decodeJwt(body.access_token).cnf).toEqual({ jkt: key.jkt });
    const adminApi = route("/api/admin/v1");
    const url = `${ISSUER}/api/admin/v1/clients`;
    const asBearer = await adminApi(new Request(url, { headers: { authorization: `Bearer ${body.access_token}` } }));
    expect(asBearer.status).toBe(401);
    const dpop = await proof(key, "GET", url, { ath: accessTokenDigest(body.access_token) });
    const withProof = await adminApi(new Request(url, { headers: { authorization: `DPoP ${body.access_token}`, dpop } }));
    expect(withProof.status).toBe(200);
  });
});

describe("configuration and housekeeping", () => {
  it("lists the proofs' algorithms in discovery: asymmetric ones only", async () => {
    const metadata = await (await discoveryRoute(new Request(`${ISSUER}/.well-known/openid-configuration`))).json();
    expect(metadata.dpop_signing_alg_values_supported).toContain("ES256");
    expect(metadata.dpop_signing_alg_values_supported.some((alg: string) => alg.startsWith("HS"))).toBe(false);
  });

  it("lets an admin require DPoP of a client, audited", async () => {
    const app = await registerApp();
    const admin = { accountId: "0x98D78d711C0ec544F6fb5d54fcf6559CF41546a9", label: "admin", scopes: ALL_SCOPES };
    expect(await changeClient(keyfob(), admin, app.clientId, { dpopBoundAccessTokens: true })).toMatchObject({
      dpopBoundAccessTokens: true,
    });
    await keyfob().audit.flush();
    const event = await tables(keyfob()).auditEvent.findFirst({ where: { action: "client.updated", clientId: app.clientId } });
    expect(event?.detail).toContain("dpopBoundAccessTokens");
  });

  it("sweeps proofs too old to be presented again", async () => {
    const db = tables(keyfob());
    const expired = `expired-${randomUUID()}`;
    await db.dpopProof.create({ data: { proofHash: expired, expiresAt: new Date(Date.now() - 1000) } });
    const live = `live-${randomUUID()}`;
    await db.dpopProof.create({ data: { proofHash: live, expiresAt: new Date(Date.now() + 60_000) } });
    await sweepExpired(keyfob().store, keyfob().config, new Date());
    expect(await db.dpopProof.findUnique({ where: { proofHash: expired } })).toBeNull();
    expect(await db.dpopProof.findUnique({ where: { proofHash: live } })).not.toBeNull();
  });
});
