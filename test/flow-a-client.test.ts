/**
 * @keyfob/flow-a-client against a real Keyfob (test/support/protocol-instance.ts in a process of its
 * own, over HTTP) that requires DPoP server nonces and issues two-minute tokens: the key that signs
 * as a viem account or as a signing function (a KMS, a hardware key), tokens bound to a DPoP key
 * (cnf.jkt) that work at /userinfo with the client's proofs, createFlowAClient's token kept until
 * shortly before it expires (this process's clock moved, Keyfob's not), and Keyfob's refusals as
 * KeyfobError with the OAuth error, its description, the status and (over a cap) Retry-After.
 */
import { calculateJwkThumbprint, decodeJwt, exportJWK, generateKeyPair } from "jose";
import { generatePrivateKey, privateKeyToAccount, signMessage, toAccount } from "viem/accounts";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { createFlowAClient, generateDPoPKeyPair, getToken, KeyfobError } from "@keyfob/flow-a-client";
import { addSigner, setClientEnabled, updateClient } from "@/lib/clients/registry";
import { keyfob } from "@/lib/runtime";
import { enableSigner, registerLicense, type License } from "./support/flow-a";
import { type ProtocolProcess, startProtocolProcess } from "./support/protocol-process";

const vehicle = "did:erc721:1:0x5fbdb2315678afecb367f032d93f642f64180aa3:9";
let instance: ProtocolProcess | undefined;
let authUrl: string;
/** A license allowed token exchange, that VEHICLE_GRANTS lets have the vehicle's privileges 1 and 4. */
let fleet: License;

beforeAll(async () => {
  fleet = await registerLicense();
  await updateClient(keyfob().store, fleet.clientId, { tokenExchange: true });
  instance = await startProtocolProcess((url) => ({
    ISSUER_URL: url,
    CHAIN_ID: "1",
    DPOP_NONCE_REQUIRED: "true",
    ACCESS_TOKEN_TTL: "2m",
    VEHICLE_GRANTS: `${vehicle}=${fleet.clientId}:1+4`,
  }));
  authUrl = instance.url;
}, 120_000);

afterAll(() => instance?.stop());
afterEach(() => void vi.useRealTimers());

const flowA = (license: License) => ({ authUrl, clientId: license.clientId, domain: license.domain });

describe("the key that signs", () => {
  it("a viem account: privateKeyToAccount's, or a custom one with signMessage", async () => {
    const license = await registerLicense();
    const signer = await enableSigner(license);
    const tokens = await getToken({ ...flowA(license), signer });
    expect(decodeJwt(tokens.access_token)).toMatchObject({ iss: authUrl, aud: license.clientId, ethereum_address: license.clientId });

    const custom = toAccount({
      address: license.owner.address,
      signMessage: ({ message }) => license.owner.signMessage({ message }),
      signTransaction: () => Promise.reject(new Error("signs messages only")),
      signTypedData: () => Promise.reject(new Error("signs messages only")),
    });
    expect((await getToken({ ...flowA(license), signer: custom })).token_type).toBe("bearer");
  });

  it("a function that signs the message (a KMS, a hardware key)", async () => {
    const license = await registerLicense();
    const kmsKey = generatePrivateKey();
    await addSigner(keyfob(), license.clientId, privateKeyToAccount(kmsKey).address);
    const signed: string[] = [];
    const kms = async (message: string) => {
      signed.push(message);
      return signMessage({ message, privateKey: kmsKey });
    };
    const tokens = await getToken({ ...flowA(license), signer: kms });
    expect(decodeJwt(tokens.access_token)).toMatchObject({ aud: license.clientId, ethereum_address: license.clientId });
    expect(signed).toEqual([expect.stringMatching(/^localhost:\d+ wants you to sign in with your Ethereum account:\n/)]);
  });
});

describe("DPoP", () => {
  it("binds the token to the key pair (cnf.jkt) with Keyfob's nonce, and its proofs let the token in at /userinfo", async () => {
    const license = await registerLicense();
    const keyPair = await generateDPoPKeyPair();
    const client = createFlowAClient({ ...flowA(license), signer: license.owner, dpop: keyPair });
    const tokens = await client.getToken();
    expect(tokens.token_type).toBe("DPoP");
    const jkt = await calculateJwkThumbprint(await exportJWK(keyPair.publicKey));
    expect(decodeJwt(tokens.access_token).cnf).toEqual({ jkt });
    expect(await client.dpopThumbprint()).toBe(jkt);

    const userinfo = `${authUrl}/userinfo`;
    const info = await client.fetch(userinfo);
    expect(info.status).toBe(200);
    expect(await info.json()).toMatchObject({ ethereum_address: license.clientId });
    // The proof for a request of the caller's own: the token's hash, Keyfob's nonce.
    const own = await fetch(userinfo, {
      headers: { authorization: `DPoP ${tokens.access_token}`, dpop: await client.dpopProof("GET", userinfo, tokens.access_token) },
    });
    expect(own.status).toBe(200);
    // Stolen, without the key: refused.
    expect((await fetch(userinfo, { headers: { authorization: `DPoP ${tokens.access_token}` } })).status).toBe(401);
  });

  it("takes a key pair of another kind (Ed25519, made with jose) and binds the vehicle token too", async () => {
    const keyPair = await generateKeyPair("EdDSA", { crv: "Ed25519" });
    const client = createFlowAClient({ ...flowA(fleet), signer: fleet.owner, dpop: keyPair });
    const jkt = await calculateJwkThumbprint(await exportJWK(keyPair.publicKey));
    const token = await client.getVehicleToken({ vehicle, privileges: ["GetNonLocationHistory"] });
    expect(token.token_type).toBe("DPoP");
    expect(decodeJwt(token.access_token)).toMatchObject({ asset: vehicle, privilege_ids: [1], cnf: { jkt } });
  });
});

describe("createFlowAClient's token", () => {
  it("is kept until a minute before it expires, then replaced", async () => {
    const license = await registerLicense();
    const client = createFlowAClient({ ...flowA(license), signer: license.owner });
    // This process's clock only: Keyfob's runs on, as a server's does.
    vi.useFakeTimers({ toFake: ["Date"] });
    const start = Date.now();
    const first = await client.getToken();
    expect(first.expires_in).toBe(120);
    vi.setSystemTime(start + 59_000);
    expect(await client.getToken()).toBe(first);
    vi.setSystemTime(start + 61_000);
    const second = await client.getToken();
    expect(second.access_token).not.toBe(first.access_token);
    expect(await client.getToken()).toBe(second);
  });

  it("is one Flow A for callers who ask at once", async () => {
    const license = await registerLicense();
    const client = createFlowAClient({ ...flowA(license), signer: license.owner });
    const [first, ...others] = await Promise.all([client.getToken(), client.getToken(), client.getToken()]);
    expect(others).toEqual([first, first]);
    for (const other of others) expect(other).toBe(first);
  });
});

describe("Keyfob's refusals are KeyfobErrors", () => {
  it("a disabled client: invalid_client, 401; the client asks again on the next call", async () => {
    const license = await registerLicense();
    await setClientEnabled(keyfob().store, license.clientId, false);
    const client = createFlowAClient({ ...flowA(license), signer: license.owner });
    const refused = await client.getToken().catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(KeyfobError);
    expect(refused).toMatchObject({
      status: 401,
      error: "invalid_client",
      error_description: "unknown or disabled client",
      retryAfter: undefined,
    });
    await setClientEnabled(keyfob().store, license.clientId, true);
    expect((await client.getToken()).token_type).toBe("bearer");
  });

  it("a key that is no signer of the license: invalid_grant, 400", async () => {
    const license = await registerLicense();
    const refused = await getToken({ ...flowA(license), signer: privateKeyToAccount(generatePrivateKey()) }).catch(
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(KeyfobError);
    expect(refused).toMatchObject({
      status: 400,
      error: "invalid_grant",
      error_description: "the signature does not match the address, an enabled signer of the client, or a contract account",
    });
  });
});

it("a caller over Keyfob's cap of unused challenges: 429 with retryAfter", async () => {
  // An instance of its own that lets a caller hold one unused challenge; a refused submission leaves its challenge unused.
  const capped = await startProtocolProcess((url) => ({ ISSUER_URL: url, PENDING_CHALLENGES_PER_IP: "1" }));
  try {
    const license = await registerLicense();
    const unknownSigner = {
      authUrl: capped.url,
      clientId: license.clientId,
      domain: license.domain,
      signer: privateKeyToAccount(generatePrivateKey()),
    };
    let refused: unknown;
    for (let attempt = 0; attempt < 3 && !(refused instanceof KeyfobError && refused.status === 429); attempt++)
      refused = await getToken(unknownSigner).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(KeyfobError);
    expect(refused).toMatchObject({ status: 429, error: "temporarily_unavailable", retryAfter: 60 });
    expect((refused as KeyfobError).error_description).toMatch(/^too many unused challenges from this address/);
  } finally {
    await capped.stop();
  }
}, 120_000);
