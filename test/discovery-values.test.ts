/**
 * Discovery as a promise (OIDC Discovery 3, RFC 8414 2): every value Keyfob advertises works, and
 * the registered values it does not advertise are refused, never silently accepted. Each list in
 * the metadata has a probe per value; an advertised value without a probe fails this file, so a new
 * value cannot be advertised without being shown to work here. The refused values are those of the
 * IANA registries (OAuth parameters, PKCE methods, JOSE algorithms) a client might try.
 */
import { randomUUID } from "node:crypto";
import { type CryptoKey, decodeJwt, decodeProtectedHeader, exportJWK, generateKeyPair, SignJWT } from "jose";
import { hexToBytes, sha256, toBytes } from "viem";
import type { PrivateKeyAccount } from "viem/accounts";
import { beforeAll, describe, expect, it } from "vitest";
import { startAuthorization } from "@/lib/actions/authorize";
import { findRoute } from "@/lib/http/routes";
import { setClientAuthentication, rotateClientSecret } from "@/lib/clients/registry";
import { completeAuthorization } from "@/lib/interactions/interactions";
import { keyfob } from "@/lib/runtime";
import type { SigningAlg } from "@/lib/store/contract";
import { enableSigner, ISSUER, registerLicense } from "./support/flow-a";
import { authorize, authorizeQuery, basic, google, registerApp, token, type App } from "./support/flow-b";
import { formPost, serveRequest } from "./support/routes";

type Metadata = Record<string, unknown>;
let metadata: Metadata;
let confidential: App;
let publicApp: App;

const RESOURCE = "https://api.discovery-values.example.com";
const DISABLED_CLIENTS_RESOURCE = "https://api.disabled-client.example.com";

beforeAll(async () => {
  confidential = await registerApp({
    confidential: true,
    settings: { refreshTokensAllowed: true, resourceServer: true, resources: [RESOURCE] },
  });
  publicApp = await registerApp();
  await registerApp({ settings: { enabled: false, resources: [DISABLED_CLIENTS_RESOURCE] } });
  metadata = await (await serveRequest(new Request(`${ISSUER}/.well-known/openid-configuration`))).json();
});

const advertised = (field: string) => metadata[field] as string[];

/** Logs in through the authorization request with `extra`; the callback's parameters. */
const callback = (app: App, extra: Record<string, string> = {}) => authorize(app, google(), extra).then((url) => url.searchParams);

/** The authorization request's answer without a login: the error it redirects with, if any. */
async function authorizationError(extra: Record<string, string>, app = confidential) {
  const start = await startAuthorization(keyfob(), authorizeQuery(app, { state: "s", ...extra }));
  if (start.kind !== "redirect") return start.kind;
  return new URL(start.location).searchParams.get("error");
}

/** A code exchanged by the confidential app: the token response. */
async function tokensFor(extra: Record<string, string> = {}) {
  const code = (await callback(confidential, extra)).get("code")!;
  const response = await token(confidential, { code });
  expect(response.status).toBe(200);
  return response.json();
}

async function errorOf(response: Response) {
  return { status: response.status, error: ((await response.json()) as { error?: string }).error };
}

/** Runs the probe of every advertised value of `field`; fails for a value that has none. */
async function everyAdvertised(field: string, probes: Record<string, () => Promise<void>>) {
  const values = advertised(field);
  expect(values.length).toBeGreaterThan(0);
  expect(values.filter((value) => !(value in probes))).toEqual([]);
  for (const value of values) await probes[value]();
}

/** The values of `registry` that `field` does not advertise: each must be refused by `refused`. */
async function everyUnadvertised(field: string, registry: string[], refused: (value: string) => Promise<void>) {
  for (const value of registry.filter((value) => !advertised(field).includes(value))) await refused(value);
}

describe("discovery's endpoints", () => {
  it("each endpoint URL is the issuer's and is served (the method its specification names)", () => {
    const methods: Record<string, string> = {
      authorization_endpoint: "GET",
      token_endpoint: "POST",
      userinfo_endpoint: "GET",
      revocation_endpoint: "POST",
      introspection_endpoint: "POST",
      jwks_uri: "GET",
      end_session_endpoint: "GET",
      pushed_authorization_request_endpoint: "POST",
      device_authorization_endpoint: "POST",
    };
    const endpoints = Object.keys(metadata).filter((field) => field.endsWith("_endpoint") || field === "jwks_uri");
    expect(endpoints.filter((field) => !(field in methods) && !field.startsWith("vehicle_token_"))).toEqual([]);
    for (const [field, method] of Object.entries(methods)) {
      const url = new URL(metadata[field] as string);
      expect(url.origin).toBe(ISSUER);
      // /auth and /session/end are pages (app/); the rest are protocol routes.
      if (field !== "authorization_endpoint" && field !== "end_session_endpoint")
        expect(findRoute(method, url.pathname), field).toBeTruthy();
    }
  });
});

describe("authorization requests", () => {
  it("response_types_supported: code works; every other registered type is unsupported_response_type", async () => {
    await everyAdvertised("response_types_supported", {
      code: async () => void expect((await callback(confidential)).get("code")).toBeTruthy(),
    });
    const registry = ["token", "id_token", "code id_token", "code token", "id_token token", "code id_token token", "none"];
    await everyUnadvertised("response_types_supported", registry, async (value) =>
      expect(await authorizationError({ response_type: value }), value).toBe("unsupported_response_type"),
    );
  });

  it("response_modes_supported: each works; fragment, form_post and the JARM modes are refused", async () => {
    await everyAdvertised("response_modes_supported", {
      query: async () => void expect((await callback(confidential, { response_mode: "query" })).get("code")).toBeTruthy(),
    });
    const registry = ["fragment", "form_post", "jwt", "query.jwt", "fragment.jwt", "form_post.jwt", "web_message"];
    await everyUnadvertised("response_modes_supported", registry, async (value) =>
      expect(await authorizationError({ response_mode: value }), value).toBe("invalid_request"),
    );
  });

  it("code_challenge_methods_supported: S256 works for a public client; plain is refused", async () => {
    await everyAdvertised("code_challenge_methods_supported", {
      S256: async () => {
        const code = (await callback(publicApp)).get("code")!;
        expect((await token(publicApp, { code })).status).toBe(200);
      },
    });
    await everyUnadvertised("code_challenge_methods_supported", ["plain"], async (value) =>
      expect(await authorizationError({ code_challenge: publicApp.pkce.verifier, code_challenge_method: value }, publicApp)).toBe(
        "invalid_request",
      ),
    );
  });

  it("scopes_supported: each scope asked for is granted", async () => {
    const granted = async (scope: string) => {
      const tokens = await tokensFor({ scope: scope === "openid" ? "openid" : `openid ${scope}` });
      expect(String(decodeJwt(tokens.access_token).scope).split(" "), scope).toContain(scope);
    };
    await everyAdvertised(
      "scopes_supported",
      Object.fromEntries(advertised("scopes_supported").map((scope) => [scope, () => granted(scope)])),
    );
    expect(await authorizationError({ scope: "openid phone" })).toBe("invalid_scope");
  });

  it("prompt_values_supported: each is understood", async () => {
    const { session } = await (async () => {
      const start = await startAuthorization(keyfob(), authorizeQuery(confidential, { state: "s" }));
      if (start.kind !== "login") throw new Error("expected the login page");
      const done = await completeAuthorization(keyfob(), start.interactionId, { identity: google() });
      return { session: done.newSession };
    })();
    expect(session).toBeTruthy();
    const asks = (prompt: string) => startAuthorization(keyfob(), authorizeQuery(confidential, { state: "s", prompt }));
    await everyAdvertised("prompt_values_supported", {
      // Without a session, prompt=none is answered at once, never with the page (OIDC Core 3.1.2.6).
      none: async () => expect(await authorizationError({ prompt: "none" })).toBe("login_required"),
      login: async () => expect((await asks("login")).kind).toBe("login"),
      consent: async () => expect((await asks("consent")).kind).toBe("login"),
      select_account: async () => expect((await asks("select_account")).kind).toBe("login"),
    });
  });

  it("protected_resources: a client registering each gets tokens for it; a disabled client's are not listed", async () => {
    expect(advertised("protected_resources")).toContain(RESOURCE);
    const forResource = (resource: string) => async () => {
      const app = await registerApp({ confidential: true, settings: { resources: [resource] } });
      const code = (await callback(app, { resource })).get("code")!;
      const { access_token } = await (await token(app, { code, resource })).json();
      expect(decodeJwt(access_token).aud, resource).toBe(resource);
    };
    await everyAdvertised(
      "protected_resources",
      Object.fromEntries(advertised("protected_resources").map((resource) => [resource, forResource(resource)])),
    );
    await everyUnadvertised("protected_resources", [DISABLED_CLIENTS_RESOURCE, "https://unregistered.example.com"], async (resource) =>
      expect(await authorizationError({ resource }), resource).toBe("invalid_target"),
    );
  });

  it("authorization_response_iss_parameter_supported: the callback names the issuer (RFC 9207)", async () => {
    expect(metadata.authorization_response_iss_parameter_supported).toBe(true);
    expect((await callback(confidential)).get("iss")).toBe(ISSUER);
  });

  it("request and request_uri parameters are not supported, as discovery says: refused, not ignored", async () => {
    expect([metadata.request_parameter_supported, metadata.request_uri_parameter_supported]).toEqual([false, false]);
    expect(await authorizationError({ request: "eyJhbGciOiJub25lIn0.e30." })).toBe("request_not_supported");
    expect(await authorizationError({ request_uri: "https://rp.example.com/request.jwt" })).toBe("request_uri_not_supported");
  });

  it("subject_types_supported: public, the same sub for two clients", async () => {
    expect(advertised("subject_types_supported")).toEqual(["public"]);
    const identity = google();
    const other = await registerApp({ confidential: true });
    const subs = [];
    for (const app of [confidential, other]) {
      const code = (await authorize(app, identity)).searchParams.get("code")!;
      subs.push(decodeJwt((await (await token(app, { code })).json()).id_token).sub);
    }
    expect(subs[0]).toBe(subs[1]);
  });
});

describe("the token endpoint", () => {
  it("grant_types_supported: each grant is served; the other registered grants are unsupported_grant_type", async () => {
    const refresh = (await tokensFor({ scope: "openid offline_access" })).refresh_token;
    const understood = async (params: Record<string, string>, error: string) =>
      expect(await errorOf(await token(confidential, params))).toEqual({ status: 400, error });
    await everyAdvertised("grant_types_supported", {
      authorization_code: async () => void (await tokensFor()),
      refresh_token: async () =>
        expect((await token(confidential, { grant_type: "refresh_token", refresh_token: refresh })).status).toBe(200),
      // Served, for clients an admin allowed it (test/management-api.test.ts, test/device-flow.test.ts,
      // test/vehicle-tokens.test.ts run each to its tokens): here the grant is recognised and judged.
      client_credentials: () => understood({ grant_type: "client_credentials" }, "unauthorized_client"),
      "urn:ietf:params:oauth:grant-type:device_code": () =>
        understood({ grant_type: "urn:ietf:params:oauth:grant-type:device_code", device_code: "unknown" }, "unauthorized_client"),
      "urn:ietf:params:oauth:grant-type:token-exchange": async () => {
        const { status, error } = await errorOf(
          await token(confidential, { grant_type: "urn:ietf:params:oauth:grant-type:token-exchange", subject_token: "x" }),
        );
        expect(status).toBe(400);
        expect(error).not.toBe("unsupported_grant_type");
      },
    });
    const registry = [
      "password",
      "implicit",
      "urn:ietf:params:oauth:grant-type:jwt-bearer",
      "urn:ietf:params:oauth:grant-type:saml2-bearer",
      "urn:openid:params:grant-type:ciba",
    ];
    await everyUnadvertised("grant_types_supported", registry, (value) => understood({ grant_type: value }, "unsupported_grant_type"));
  });

  it("dpop_signing_alg_values_supported: a proof with each is accepted; HS256 and none are refused", async () => {
    const proof = async (alg: string) => {
      const curve = { Ed25519: "Ed25519", EdDSA: "Ed25519" }[alg];
      const { privateKey, publicKey } = await generateKeyPair(alg === "EdDSA" ? "EdDSA" : alg, { crv: curve });
      return new SignJWT({ htm: "POST", htu: `${ISSUER}/token`, jti: randomUUID(), iat: Math.floor(Date.now() / 1000) })
        .setProtectedHeader({ alg, typ: "dpop+jwt", jwk: await exportJWK(publicKey) })
        .sign(privateKey);
    };
    const exchange = async (dpop: string) => {
      const code = (await callback(confidential)).get("code")!;
      const request = formPost(
        "/token",
        { grant_type: "authorization_code", code, redirect_uri: confidential.redirectUri },
        {
          authorization: basic(confidential),
          dpop,
        },
      );
      return serveRequest(request);
    };
    await everyAdvertised(
      "dpop_signing_alg_values_supported",
      Object.fromEntries(
        advertised("dpop_signing_alg_values_supported").map((alg) => [
          alg,
          async () => expect((await (await exchange(await proof(alg))).json()).token_type, alg).toBe("DPoP"),
        ]),
      ),
    );
    const unsigned = (alg: string) =>
      `${Buffer.from(JSON.stringify({ alg, typ: "dpop+jwt" })).toString("base64url")}.${Buffer.from(
        JSON.stringify({ htm: "POST", htu: `${ISSUER}/token`, jti: randomUUID(), iat: Math.floor(Date.now() / 1000) }),
      ).toString("base64url")}.`;
    for (const alg of ["HS256", "none", "ES256K"]) {
      expect(advertised("dpop_signing_alg_values_supported")).not.toContain(alg);
      expect(await errorOf(await exchange(unsigned(alg))), alg).toEqual({ status: 400, error: "invalid_dpop_proof" });
    }
  });

  it("id_token_signing_alg_values_supported: a client registered for each gets ID and access tokens signed with it; HS256 and none cannot be registered", async () => {
    const signedFor = (alg: string) => async () => {
      const app = await registerApp({ confidential: true, settings: { idTokenSignedResponseAlg: alg as SigningAlg } });
      const code = (await callback(app)).get("code")!;
      const { id_token, access_token } = await (await token(app, { code })).json();
      expect([decodeProtectedHeader(id_token).alg, decodeProtectedHeader(access_token).alg], alg).toEqual([alg, alg]);
    };
    await everyAdvertised(
      "id_token_signing_alg_values_supported",
      Object.fromEntries(advertised("id_token_signing_alg_values_supported").map((alg) => [alg, signedFor(alg)])),
    );
    for (const alg of ["HS256", "none", "RS384", "ES384", "EdDSA"]) {
      expect(advertised("id_token_signing_alg_values_supported")).not.toContain(alg);
      await expect(registerApp({ settings: { idTokenSignedResponseAlg: alg as SigningAlg } }), alg).rejects.toThrow();
    }
  });
});

describe("client authentication", () => {
  const ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";
  /** A private_key_jwt client with a key per JWK Set algorithm (its kid the algorithm), a client_secret_jwt one, a license with a signer. */
  let keyApp: App;
  const keys: Record<string, CryptoKey> = {};
  let secretJwtApp: App;
  let license: { clientId: string; signer: PrivateKeyAccount };

  beforeAll(async () => {
    keyApp = await registerApp();
    const jwks = [];
    for (const alg of ["RS256", "PS256", "ES256", "EdDSA"]) {
      const { privateKey, publicKey } = await generateKeyPair(alg, { crv: alg === "EdDSA" ? "Ed25519" : undefined });
      keys[alg] = privateKey;
      jwks.push({ ...(await exportJWK(publicKey)), kid: alg, alg });
    }
    await setClientAuthentication(keyfob().store, keyApp.clientId, { tokenEndpointAuthMethod: "private_key_jwt", jwks: { keys: jwks } });
    const registered = await registerApp();
    await setClientAuthentication(keyfob().store, registered.clientId, { tokenEndpointAuthMethod: "client_secret_jwt" });
    secretJwtApp = { ...registered, secret: await rotateClientSecret(keyfob(), registered.clientId) };
    const licensed = await registerLicense();
    await setClientAuthentication(keyfob().store, licensed.clientId, { tokenEndpointAuthMethod: "private_key_jwt" });
    license = { clientId: licensed.clientId, signer: await enableSigner(licensed) };
  });

  const claims = (clientId: string) => {
    const now = Math.floor(Date.now() / 1000);
    return { iss: clientId, sub: clientId, aud: ISSUER, jti: randomUUID(), iat: now, exp: now + 60 };
  };
  /** A JWS over the claims for `clientId`, its signature made by `sign` from the signing input. */
  const jws = async (alg: string, clientId: string, sign: (input: string) => Promise<Uint8Array | string>) => {
    const b64 = (value: object) => Buffer.from(JSON.stringify(value)).toString("base64url");
    const input = `${b64({ alg, kid: alg })}.${b64(claims(clientId))}`;
    const signature = await sign(input);
    return `${input}.${typeof signature === "string" ? signature : Buffer.from(signature).toString("base64url")}`;
  };
  /** The client assertion each advertised algorithm signs (OIDC Core 9; a license's signer for ES256K and EIP191). */
  const signedWith: Record<string, () => Promise<{ app: string; assertion: string }>> = {
    ...Object.fromEntries(
      ["RS256", "PS256", "ES256", "EdDSA"].map((alg) => [
        alg,
        async () => ({
          app: keyApp.clientId,
          assertion: await new SignJWT(claims(keyApp.clientId)).setProtectedHeader({ alg, kid: alg }).sign(keys[alg]),
        }),
      ]),
    ),
    HS256: async () => ({
      app: secretJwtApp.clientId,
      assertion: await new SignJWT(claims(secretJwtApp.clientId))
        .setProtectedHeader({ alg: "HS256" })
        .sign(new TextEncoder().encode(secretJwtApp.secret)),
    }),
    ES256K: async () => ({
      app: license.clientId,
      assertion: await jws("ES256K", license.clientId, async (input) =>
        hexToBytes(await license.signer.sign({ hash: sha256(toBytes(input)) })).slice(0, 64),
      ),
    }),
    EIP191: async () => ({
      app: license.clientId,
      assertion: await jws("EIP191", license.clientId, async (input) => hexToBytes(await license.signer.signMessage({ message: input }))),
    }),
  };

  /** How each method authenticates its app, as form fields and headers. */
  const methods: Record<string, () => Promise<{ app: App; fields: Record<string, string>; headers?: Record<string, string> }>> = {
    none: async () => ({ app: publicApp, fields: { client_id: publicApp.clientId } }),
    client_secret_basic: async () => ({ app: confidential, fields: {}, headers: { authorization: basic(confidential) } }),
    client_secret_post: async () => ({
      app: confidential,
      fields: { client_id: confidential.clientId, client_secret: confidential.secret! },
    }),
    private_key_jwt: async () => ({
      app: keyApp,
      fields: { client_assertion_type: ASSERTION_TYPE, client_assertion: (await signedWith.ES256()).assertion },
    }),
    client_secret_jwt: async () => ({
      app: secretJwtApp,
      fields: { client_assertion_type: ASSERTION_TYPE, client_assertion: (await signedWith.HS256()).assertion },
    }),
  };
  /** Methods of the registry Keyfob does not offer: a certificate's word is not taken. */
  const certificateMethods = ["tls_client_auth", "self_signed_tls_client_auth"];

  /** The endpoint's request of `app`, authenticated by `fields` and `headers`. */
  const endpoints: Record<string, (app: App, fields: Record<string, string>, headers?: Record<string, string>) => Promise<Response>> = {
    token_endpoint: async (app, fields, headers) => {
      const code = (await callback(app)).get("code")!;
      const verifier: Record<string, string> = app.secret ? {} : { code_verifier: app.pkce.verifier };
      return serveRequest(
        formPost("/token", { grant_type: "authorization_code", code, redirect_uri: app.redirectUri, ...verifier, ...fields }, headers),
      );
    },
    revocation_endpoint: (_app, fields, headers) => serveRequest(formPost("/token/revoke", { token: "unknown", ...fields }, headers)),
    introspection_endpoint: (_app, fields, headers) =>
      serveRequest(formPost("/token/introspect", { token: "unknown", ...fields }, headers)),
  };

  for (const [endpoint, send] of Object.entries(endpoints)) {
    it(`${endpoint}_auth_methods_supported: each method authenticates; the others are invalid_client`, async () => {
      const field = `${endpoint}_auth_methods_supported`;
      await everyAdvertised(
        field,
        Object.fromEntries(
          Object.entries(methods).map(([method, how]) => [
            method,
            async () => {
              const { app, fields, headers } = await how();
              expect((await send(app, fields, headers)).status, method).toBe(200);
            },
          ]),
        ),
      );
      await everyUnadvertised(field, [...Object.keys(methods), ...certificateMethods], async (method) => {
        const { app, fields } = methods[method]
          ? await methods[method]()
          : { app: confidential, fields: { client_id: confidential.clientId } };
        expect(await errorOf(await send(app, fields)), `${field} ${method}`).toMatchObject({ status: 401, error: "invalid_client" });
      });
    });

    it(`${endpoint}_auth_signing_alg_values_supported: an assertion with each works; HS384, HS512 and none do not`, async () => {
      const field = `${endpoint}_auth_signing_alg_values_supported`;
      const app = (id: string) =>
        [keyApp, secretJwtApp, publicApp].find((candidate) => candidate.clientId === id) ?? { ...publicApp, clientId: id };
      await everyAdvertised(
        field,
        Object.fromEntries(
          Object.entries(signedWith).map(([alg, sign]) => [
            alg,
            async () => {
              const signed = await sign();
              if (endpoint === "token_endpoint" && signed.app === license.clientId) return; // a license's code flow: test/client-assertions.test.ts
              const fields = { client_assertion_type: ASSERTION_TYPE, client_assertion: signed.assertion };
              expect((await send(app(signed.app), fields)).status, alg).toBe(200);
            },
          ]),
        ),
      );
      const key = new TextEncoder().encode(secretJwtApp.secret);
      const unadvertised: Record<string, () => Promise<string>> = {
        HS384: () => new SignJWT(claims(secretJwtApp.clientId)).setProtectedHeader({ alg: "HS384" }).sign(key),
        HS512: () => new SignJWT(claims(secretJwtApp.clientId)).setProtectedHeader({ alg: "HS512" }).sign(key),
        none: () => jws("none", keyApp.clientId, async () => ""),
      };
      for (const [alg, sign] of Object.entries(unadvertised)) {
        expect(advertised(field)).not.toContain(alg);
        const assertion = await sign();
        const client = alg === "none" ? keyApp : secretJwtApp;
        const fields = { client_assertion_type: ASSERTION_TYPE, client_assertion: assertion };
        expect(await errorOf(await send(client, fields)), alg).toMatchObject({ status: 401, error: "invalid_client" });
      }
    });
  }
});
