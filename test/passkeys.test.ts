/**
 * Passkeys (lib/passkeys) on a real PostgreSQL with real WebAuthn signatures from a software
 * authenticator (test/support/authenticator.ts): registration of a new account, login, adding a
 * passkey to an account, and every way an answer must be refused (replay, another login's or an
 * expired challenge, a bad signature, an unknown passkey, another origin, no user verification, a
 * counter that went back). The browser side runs in real Chromium in e2e/passkeys.spec.ts.
 */
import { generateKeyPairSync } from "node:crypto";
import { decodeJwt } from "jose";
import { describe, expect, it } from "vitest";
import { resolveAccount } from "@/lib/accounts/accounts";
import { startAuthorization } from "@/lib/actions/authorize";
import { openidConfiguration } from "@/lib/discovery";
import { loginWithPasskey, signUpWithPasskey } from "@/lib/passkeys/login";
import {
  addPasskey,
  addPasskeyOptions,
  listPasskeys,
  loginOptions,
  PasskeyError,
  registrationOptions,
  relyingParty,
  verifyPasskeyLogin,
} from "@/lib/passkeys/passkeys";
import { keyfob } from "@/lib/runtime";
import { decodeSubject } from "@/lib/tokens/sub";
import { SoftAuthenticator } from "./support/authenticator";
import { ISSUER } from "./support/flow-a";
import { authorizeQuery, google, registerApp, signedInNow, token, type App } from "./support/flow-b";
import { tables } from "./support/database";

const NAMES = { userName: "Keyfob account", displayName: "Keyfob account" };

async function newLogin(app: App, extra: Record<string, string> = {}) {
  const start = await startAuthorization(keyfob(), authorizeQuery(app, { state: "st-pk", nonce: "n-pk", ...extra }));
  if (start.kind !== "login") throw new Error(`expected the login page, got ${JSON.stringify(start)}`);
  return start.interactionId;
}

async function refusal(promise: Promise<unknown>): Promise<PasskeyError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  if (!(error instanceof PasskeyError)) throw new Error(`expected a PasskeyError, got ${String(error)}`);
  return error;
}

/** A new account through "Create a passkey" on a login page; returns the authenticator and the account. */
async function signUp(app: App) {
  const authenticator = new SoftAuthenticator(ISSUER);
  const interactionId = await newLogin(app);
  const options = await registrationOptions(keyfob(), interactionId, NAMES);
  const completion = await signUpWithPasskey(keyfob(), interactionId, authenticator.create(options));
  const code = new URL(completion.location).searchParams.get("code")!;
  const response = await token(app, { code });
  expect(response.status).toBe(200);
  const claims = decodeJwt((await response.json()).id_token as string);
  return { authenticator, claims, accountId: claims.ethereum_address as string };
}

describe("passkeys: options", () => {
  it("take the RP ID and origin from ISSUER_URL, require user verification and discoverable credentials", async () => {
    expect(relyingParty(keyfob())).toEqual({ rpID: "localhost", origin: ISSUER, rpName: "Keyfob" });
    const app = await registerApp();
    const interactionId = await newLogin(app);
    const creation = await registrationOptions(keyfob(), interactionId, NAMES);
    expect(creation.rp).toEqual({ id: "localhost", name: "Keyfob" });
    expect(creation.authenticatorSelection).toMatchObject({ residentKey: "required", userVerification: "required" });
    expect(creation.attestation).toBe("none");
    expect(creation.challenge).toMatch(/^[A-Za-z0-9_-]{43}$/);
    const request = await loginOptions(keyfob(), interactionId);
    expect(request).toMatchObject({ rpId: "localhost", userVerification: "required" });
    expect(request.allowCredentials ?? []).toEqual([]);
    expect(request.challenge).not.toBe(creation.challenge);
  });

  it("are refused for a login that is over", async () => {
    const app = await registerApp();
    const interactionId = await newLogin(app);
    await tables(keyfob()).interaction.update({ where: { id: interactionId }, data: { completedAt: new Date() } });
    expect((await refusal(loginOptions(keyfob(), interactionId))).reason).toBe("unavailable_login");
    expect((await refusal(registrationOptions(keyfob(), "not-an-interaction", NAMES))).reason).toBe("unavailable_login");
  });
});

describe("passkeys: a new user, then a returning one", () => {
  it("a new passkey makes an account with a server-generated address; its tokens say passkey (sub, provider_id, amr)", async () => {
    const app = await registerApp();
    const { claims, accountId } = await signUp(app);
    expect(accountId).toMatch(/^0x[0-9a-fA-F]{40}$/);
    expect(claims).toMatchObject({ provider_id: "passkey", email_verified: false, amr: ["passkey"], nonce: "n-pk" });
    expect(decodeSubject(claims.sub!)).toEqual({ userId: accountId, connector: "passkey" });
    const [stored] = await listPasskeys(keyfob(), accountId);
    expect(stored).toMatchObject({ deviceType: "singleDevice", backedUp: false });
    const identity = await tables(keyfob()).identity.findFirstOrThrow({ where: { accountId, provider: "passkey" } });
    expect(identity.subject).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it("the passkey logs into the same account again, and its counter moves forward", async () => {
    const app = await registerApp();
    const { authenticator, accountId, claims } = await signUp(app);
    const interactionId = await newLogin(app);
    const completion = await loginWithPasskey(keyfob(), interactionId, authenticator.get(await loginOptions(keyfob(), interactionId)));
    expect(completion.newSession?.token).toBeTruthy();
    const response = await token(app, { code: new URL(completion.location).searchParams.get("code")! });
    const again = decodeJwt((await response.json()).id_token as string);
    expect(again.sub).toBe(claims.sub);
    expect(again.ethereum_address).toBe(accountId);
    const row = await tables(keyfob()).passkeyCredential.findFirstOrThrow({ where: { accountId } });
    expect(row.counter).toBe(1n);
    expect(row.lastUsedAt).toBeInstanceOf(Date);
  });

  it("the passkey's user.id is the UTF-8 of the stored user handle, as SimpleWebAuthn 9 made it, so older passkeys still match", async () => {
    const app = await registerApp();
    const { authenticator, accountId } = await signUp(app);
    const { subject } = await tables(keyfob()).identity.findFirstOrThrow({ where: { accountId, provider: "passkey" } });
    expect(Buffer.from(authenticator.credentials[0].userHandle, "base64url").toString("utf8")).toBe(subject);
    const [row] = await tables(keyfob()).passkeyCredential.findMany({ where: { accountId } });
    expect(row.userHandle).toBe(subject);
  });
});

describe("passkeys: refused answers", () => {
  it("a replayed assertion is refused, and so is the same assertion twice at once (exactly one login)", async () => {
    const app = await registerApp();
    const { authenticator } = await signUp(app);
    const interactionId = await newLogin(app);
    const answer = authenticator.get(await loginOptions(keyfob(), interactionId));
    await verifyPasskeyLogin(keyfob(), interactionId, answer);
    expect((await refusal(verifyPasskeyLogin(keyfob(), interactionId, answer))).reason).toBe("expired");
    // Once the login is completed, the answer is refused at the door.
    const completed = authenticator.get(await loginOptions(keyfob(), interactionId));
    await loginWithPasskey(keyfob(), interactionId, completed);
    expect((await refusal(loginWithPasskey(keyfob(), interactionId, completed))).reason).toBe("unavailable_login");

    const other = await newLogin(app);
    const twice = authenticator.get(await loginOptions(keyfob(), other));
    const results = await Promise.allSettled([verifyPasskeyLogin(keyfob(), other, twice), verifyPasskeyLogin(keyfob(), other, twice)]);
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
  });

  it("an assertion for another login's challenge, or an expired one, is refused", async () => {
    const app = await registerApp();
    const { authenticator } = await signUp(app);
    const first = await newLogin(app);
    const second = await newLogin(app);
    const forFirst = authenticator.get(await loginOptions(keyfob(), first));
    expect((await refusal(verifyPasskeyLogin(keyfob(), second, forFirst))).reason).toBe("expired");
    // The refused attempt did not use the challenge up for its own login.
    await expect(verifyPasskeyLogin(keyfob(), first, forFirst)).resolves.toMatchObject({ provider: "passkey" });

    const options = await loginOptions(keyfob(), second);
    await tables(keyfob()).passkeyChallenge.updateMany({
      where: { usedAt: null, interactionId: second },
      data: { expiresAt: new Date(Date.now() - 1000) },
    });
    expect((await refusal(verifyPasskeyLogin(keyfob(), second, authenticator.get(options)))).reason).toBe("expired");
  });

  it("a tampered signature, another key, another origin, no user verification or a counter that went back are refused", async () => {
    const app = await registerApp();
    const { authenticator } = await signUp(app);
    const attempt = async (
      bend: Parameters<SoftAuthenticator["get"]>[1],
      tamper?: (answer: ReturnType<SoftAuthenticator["get"]>) => void,
    ) => {
      const interactionId = await newLogin(app);
      const answer = authenticator.get(await loginOptions(keyfob(), interactionId), bend);
      tamper?.(answer);
      return refusal(verifyPasskeyLogin(keyfob(), interactionId, answer));
    };
    const flip = (answer: ReturnType<SoftAuthenticator["get"]>) => {
      const signature = Buffer.from(answer.response.signature, "base64url");
      signature[signature.length - 3] ^= 0x01;
      answer.response.signature = signature.toString("base64url");
    };
    expect((await attempt({}, flip)).reason).toBe("not_verified");
    expect((await attempt({ key: generateKeyPairSync("ec", { namedCurve: "P-256" }).privateKey })).reason).toBe("not_verified");
    expect((await attempt({ origin: "https://evil.example" })).reason).toBe("not_verified");
    expect((await attempt({ type: "webauthn.create" })).reason).toBe("not_verified");
    expect((await attempt({ flags: 0x01 })).reason).toBe("not_verified"); // presence without verification
    // A cloned authenticator: its counter does not pass the one Keyfob last saw.
    const login = await newLogin(app);
    await verifyPasskeyLogin(keyfob(), login, authenticator.get(await loginOptions(keyfob(), login)));
    const seen = authenticator.credentials[0].counter;
    expect((await attempt({ counter: seen })).reason).toBe("not_verified");
    expect((await attempt({ counter: seen - 1 })).reason).toBe("not_verified");
    expect((await attempt({}, (answer) => (answer.response.userHandle = "someone-else"))).reason).toBe("not_verified");
    // The real passkey still works afterwards.
    const interactionId = await newLogin(app);
    await expect(
      verifyPasskeyLogin(keyfob(), interactionId, authenticator.get(await loginOptions(keyfob(), interactionId))),
    ).resolves.toMatchObject({ provider: "passkey" });
  });

  it("a passkey Keyfob does not know, a malformed answer, or a registration replayed are refused", async () => {
    const app = await registerApp();
    const stranger = new SoftAuthenticator(ISSUER);
    const interactionId = await newLogin(app);
    stranger.create(await registrationOptions(keyfob(), interactionId, NAMES)); // created, never sent
    expect(
      (await refusal(verifyPasskeyLogin(keyfob(), interactionId, stranger.get(await loginOptions(keyfob(), interactionId))))).reason,
    ).toBe("unknown_passkey");
    for (const junk of [
      null,
      "x",
      { id: "a", type: "public-key" },
      { ...stranger.get(await loginOptions(keyfob(), interactionId)), type: "password" },
    ]) {
      expect((await refusal(verifyPasskeyLogin(keyfob(), interactionId, junk))).reason).toBe("malformed");
    }

    const authenticator = new SoftAuthenticator(ISSUER);
    const signUpLogin = await newLogin(app);
    const created = authenticator.create(await registrationOptions(keyfob(), signUpLogin, NAMES));
    await signUpWithPasskey(keyfob(), signUpLogin, created);
    const later = await newLogin(app);
    expect((await refusal(signUpWithPasskey(keyfob(), later, created))).reason).toBe("expired");
    // A registration answer from another origin, or without user verification, makes no account.
    for (const bend of [{ origin: "https://evil.example" }, { flags: 0x41 }]) {
      const login = await newLogin(app);
      const answer = new SoftAuthenticator(ISSUER).create(await registrationOptions(keyfob(), login, NAMES), bend);
      expect((await refusal(signUpWithPasskey(keyfob(), login, answer))).reason).toBe("not_verified");
    }
  });

  it("refusals are audited as failed logins of the client", async () => {
    const app = await registerApp();
    const interactionId = await newLogin(app);
    await refusal(loginWithPasskey(keyfob(), interactionId, { nonsense: true }));
    await keyfob().audit.flush();
    const event = await tables(keyfob()).auditEvent.findFirst({
      where: { clientId: app.clientId, action: "login.failed" },
      orderBy: { at: "desc" },
    });
    expect(event?.detail).toMatch(/^passkey: /);
  });
});

describe("passkeys: adding one to an account", () => {
  it("a Google account adds passkeys (one user handle for all); each then logs into that account", async () => {
    const app = await registerApp();
    const accountId = await resolveAccount(keyfob(), google());
    const phone = new SoftAuthenticator(ISSUER);
    const laptop = new SoftAuthenticator(ISSUER);
    await addPasskey(keyfob(), accountId, phone.create(await addPasskeyOptions(keyfob(), accountId, NAMES, signedInNow())), signedInNow());
    const second = await addPasskeyOptions(keyfob(), accountId, NAMES, signedInNow());
    expect(second.excludeCredentials?.map((c) => c.id)).toEqual([phone.credentials[0].id.toString("base64url")]);
    await addPasskey(keyfob(), accountId, laptop.create(second), signedInNow());
    expect(phone.credentials[0].userHandle).toBe(laptop.credentials[0].userHandle);
    expect(await listPasskeys(keyfob(), accountId)).toHaveLength(2);

    for (const authenticator of [phone, laptop]) {
      const interactionId = await newLogin(app);
      const completion = await loginWithPasskey(keyfob(), interactionId, authenticator.get(await loginOptions(keyfob(), interactionId)));
      const claims = decodeJwt(
        (await (await token(app, { code: new URL(completion.location).searchParams.get("code")! })).json()).id_token as string,
      );
      expect(claims.ethereum_address).toBe(accountId);
      expect(decodeSubject(claims.sub!)).toEqual({ userId: accountId, connector: "passkey" });
    }
  });

  it("another account's challenge, or a login challenge, cannot add a passkey", async () => {
    const mine = await resolveAccount(keyfob(), google());
    const theirs = await resolveAccount(keyfob(), google());
    const answer = new SoftAuthenticator(ISSUER).create(await addPasskeyOptions(keyfob(), mine, NAMES, signedInNow()));
    expect((await refusal(addPasskey(keyfob(), theirs, answer, signedInNow()))).reason).toBe("expired");
    await expect(addPasskey(keyfob(), mine, answer, signedInNow())).resolves.toMatchObject({ id: expect.any(String) });

    const app = await registerApp();
    const interactionId = await newLogin(app);
    const signUpAnswer = new SoftAuthenticator(ISSUER).create(await registrationOptions(keyfob(), interactionId, NAMES));
    expect((await refusal(addPasskey(keyfob(), mine, signUpAnswer, signedInNow()))).reason).toBe("expired");
  });
});

describe("languages", () => {
  it("discovery lists ui_locales_supported, and ui_locales is kept with the login and in its restart URL", async () => {
    expect(openidConfiguration({ issuerUrl: ISSUER, vehicleTokenIssuer: ISSUER }).ui_locales_supported).toEqual(["en", "de"]);
    const app = await registerApp();
    const interactionId = await newLogin(app, { ui_locales: "de-CH fr" });
    const { pendingInteraction } = await import("@/lib/interactions/interactions");
    const pending = await pendingInteraction(keyfob(), interactionId);
    expect(pending?.uiLocales).toBe("de-CH fr");
    expect(new URLSearchParams(pending!.restartUrl.split("?")[1]).get("ui_locales")).toBe("de-CH fr");
  });
});
