/**
 * Issue 34's whole promise to a third-party app, in one run with openid-client against the real
 * route handlers: a client that must ask for consent, authenticates with private_key_jwt, wants
 * PS256 ID tokens (FAPI 2.0) and tokens for one API (RFC 8707) pushes its request with a DPoP proof
 * (PAR), the user logs in and allows it, and the code gives a PS256 ID token for the client and a
 * DPoP-bound access token for the API; the refresh keeps all of that, and revoking the consent
 * ends the refresh token. Each part has its own file (consent, client-assertions, signing-algs,
 * resource-indicators, dpop): this one shows they hold together.
 */
import { decodeJwt, decodeProtectedHeader, exportJWK, generateKeyPair } from "jose";
import * as client from "openid-client";
import { expect, it } from "vitest";
import { revokeApplication } from "@/lib/accounts/self-service";
import { startAuthorization } from "@/lib/actions/authorize";
import { addRedirectUri, createClient, setClientAuthentication, updateClient } from "@/lib/clients/registry";
import { giveConsent } from "@/lib/interactions/consent";
import { completeAuthorization } from "@/lib/interactions/interactions";
import { keyfob } from "@/lib/runtime";
import { findSession } from "@/lib/sessions/login-session";
import { ISSUER } from "./support/flow-a";
import { google } from "./support/flow-b";
import { serveRequest } from "./support/routes";

const API = "https://telemetry.example.com/v2";

it("gives a consenting user's tokens to a private_key_jwt, PS256, DPoP client for its API, until the consent is revoked", async () => {
  const { id } = await createClient(keyfob().store, { name: "Third-party telemetry" });
  const redirectUri = "https://telemetry.example.com/cb";
  await addRedirectUri(keyfob().store, id, redirectUri);
  await updateClient(keyfob().store, id, {
    requireConsent: true,
    idTokenSignedResponseAlg: "PS256",
    resources: [API],
    refreshTokensAllowed: true,
  });
  const { privateKey, publicKey } = await generateKeyPair("ES256");
  await setClientAuthentication(keyfob().store, id, {
    tokenEndpointAuthMethod: "private_key_jwt",
    jwks: { keys: [{ ...(await exportJWK(publicKey)), kid: "k1", alg: "ES256" }] },
  });

  const config = await client.discovery(
    new URL(ISSUER),
    id,
    { id_token_signed_response_alg: "PS256" },
    client.PrivateKeyJwt({ key: privateKey, kid: "k1" }),
    { execute: [client.allowInsecureRequests], [client.customFetch]: (url, init) => serveRequest(new Request(url, init as RequestInit)) },
  );
  const dpop = client.getDPoPHandle(config, await client.randomDPoPKeyPair("ES256"));
  const verifier = client.randomPKCECodeVerifier();
  const pushed = await client.buildAuthorizationUrlWithPAR(
    config,
    {
      redirect_uri: redirectUri,
      scope: "openid email offline_access",
      state: "s1",
      resource: API,
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: "S256",
    },
    { DPoP: dpop },
  );

  const start = await startAuthorization(keyfob(), pushed.searchParams);
  if (start.kind !== "login") throw new Error(`expected the login page, got ${start.kind}`);
  const done = await completeAuthorization(keyfob(), start.interactionId, { identity: google() });
  expect(new URL(done.location).pathname).toBe(`/auth/interaction/${start.interactionId}/consent`);
  const session = (await findSession(keyfob(), done.newSession!.token))!;
  const callback = new URL(await giveConsent(keyfob(), start.interactionId, session));

  const tokens = await client.authorizationCodeGrant(
    config,
    callback,
    { pkceCodeVerifier: verifier, expectedState: "s1" },
    { resource: API },
    { DPoP: dpop },
  );
  expect(decodeProtectedHeader(tokens.id_token!).alg).toBe("PS256");
  expect(tokens.claims()!.aud).toBe(id);
  expect(tokens.token_type.toLowerCase()).toBe("dpop");
  const access = decodeJwt(tokens.access_token);
  expect([decodeProtectedHeader(tokens.access_token).alg, access.aud, access.client_id]).toEqual(["PS256", API, id]);
  expect(access.cnf).toHaveProperty("jkt");

  const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token!, undefined, { DPoP: dpop });
  expect(decodeJwt(refreshed.access_token).aud).toBe(API);

  await revokeApplication(keyfob(), session.accountId, id); // "Revoke" at /account
  await expect(client.refreshTokenGrant(config, refreshed.refresh_token!, undefined, { DPoP: dpop })).rejects.toMatchObject({
    error: "invalid_grant",
  });
});
