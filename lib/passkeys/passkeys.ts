/**
 * Passkeys (WebAuthn, with SimpleWebAuthn): a person without a wallet or a Google/Apple account
 * creates a passkey on the hosted login page and gets an account with a server-generated address
 * (as Google and Apple users do); the passkey then logs into that account, and a signed-in person
 * can add more passkeys to their account at /account.
 *
 * - Every passkey of an account carries the account's WebAuthn user handle (32 random bytes,
 *   base64url). The handle is the subject of the account's `passkey` identity, so whichever of its
 *   passkeys signs in, the login is the same identity (`sub` with connector "passkey").
 * - Challenges are 32 random bytes from the server, stored as their SHA-256 with what they are for
 *   (purpose, and the login or account they belong to), single use (consumed atomically before the
 *   answer is checked, so an answer is never accepted twice, even at once) and short lived.
 * - The relying party is ISSUER_URL: its host name is the RP ID, its origin the only origin
 *   accepted. User verification (PIN, biometrics) is required: a passkey is the only factor.
 *
 * No Next.js imports: server actions call these, tests too.
 */
import { createHash, randomBytes } from "node:crypto";
import {
  generateAuthenticationOptions,
  generateRegistrationOptions,
  verifyAuthenticationResponse,
  verifyRegistrationResponse,
  type AuthenticationResponseJSON,
  type AuthenticatorTransportFuture,
  type PublicKeyCredentialCreationOptionsJSON,
  type PublicKeyCredentialRequestOptionsJSON,
  type RegistrationResponseJSON,
  type VerifiedAuthenticationResponse,
  type VerifiedRegistrationResponse,
} from "@simplewebauthn/server";
import { isoBase64URL, isoUint8Array } from "@simplewebauthn/server/helpers";
import { z } from "zod";
import { resolveAccount, type LoginIdentity } from "../accounts/accounts";
import { requireStrongLogin, type SignedInRequester } from "../accounts/sensitive-changes";
import type { Keyfob } from "../keyfob";
import { Duplicate } from "../store";
import { OAuthError } from "../oauth/errors";
import { isOpaque } from "../oauth/opaque";

/** How long a browser has to answer a challenge. */
export const PASSKEY_CHALLENGE_TTL_MS = 5 * 60_000;
/** What the browser is told (WebAuthn `timeout`): a little less than the challenge lives. */
const CEREMONY_TIMEOUT_MS = 4 * 60_000;
/** ES256 and RS256, what passkey providers and security keys use. */
const ALGORITHMS = [-7, -257];

export type PasskeyPurpose = "register" | "login" | "add";

/** What the browser passes to navigator.credentials.get / create (SimpleWebAuthn's JSON forms). */
export type PasskeyRequestOptions = PublicKeyCredentialRequestOptionsJSON;
export type PasskeyCreationOptions = PublicKeyCredentialCreationOptionsJSON;

/**
 * WebAuthn's user.id for a user handle: the UTF-8 bytes of its base64url text, as SimpleWebAuthn 9
 * sent it. Every passkey made since holds these bytes, so an account's passkeys keep one user.id.
 */
const userID = (userHandle: string) => isoUint8Array.fromUTF8String(userHandle);

/** Why a passkey step was refused; the pages show a sentence per reason. */
export type PasskeyFailure = "malformed" | "expired" | "unknown_passkey" | "not_verified" | "already_registered" | "unavailable_login";

/** A refused passkey step: an OAuth error (for logs and the audit log) with a reason the pages translate. */
export class PasskeyError extends OAuthError {
  constructor(
    readonly reason: PasskeyFailure,
    description: string,
  ) {
    super(reason === "unavailable_login" ? "invalid_request" : "invalid_grant", description);
  }
}

/** The relying party: ISSUER_URL's host name and origin. */
export function relyingParty({ config }: Pick<Keyfob, "config">) {
  const url = new URL(config.issuerUrl);
  return { rpID: url.hostname, origin: url.origin, rpName: "Keyfob" };
}

const b64 = z
  .string()
  .max(64 * 1024)
  .regex(/^[A-Za-z0-9_-]*={0,2}$/);
const clientExtensionResults = z.record(z.string(), z.unknown()).default({});
const authenticationResponse = z.object({
  id: b64.max(1400),
  rawId: b64.max(1400),
  type: z.literal("public-key"),
  response: z.object({ clientDataJSON: b64, authenticatorData: b64, signature: b64, userHandle: z.string().max(512).optional() }),
  clientExtensionResults,
  authenticatorAttachment: z.enum(["platform", "cross-platform"]).optional(),
});
const registrationResponse = z.object({
  id: b64.max(1400),
  rawId: b64.max(1400),
  type: z.literal("public-key"),
  response: z.object({
    clientDataJSON: b64,
    attestationObject: b64,
    transports: z.array(z.string().max(32)).max(10).optional(),
    authenticatorData: b64.optional(),
    publicKey: b64.optional(),
    publicKeyAlgorithm: z.number().optional(),
  }),
  clientExtensionResults,
  authenticatorAttachment: z.enum(["platform", "cross-platform"]).optional(),
});

const digest = (challenge: string) => createHash("sha256").update(challenge).digest("base64url");

/** A challenge for `purpose`, stored; returns it (base64url). Expired challenges are swept on the way. */
async function issueChallenge(
  { store, clock }: Pick<Keyfob, "clock" | "store">,
  purpose: PasskeyPurpose,
  binding: { interactionId?: string; accountId?: string; userHandle?: string },
  now = clock.now(),
): Promise<string> {
  const challenge = randomBytes(32).toString("base64url");
  await store.passkeyChallenges.create(
    {
      challengeHash: digest(challenge),
      purpose,
      interactionId: binding.interactionId ?? null,
      accountId: binding.accountId ?? null,
      userHandle: binding.userHandle ?? null,
      expiresAt: new Date(now.getTime() + PASSKEY_CHALLENGE_TTL_MS),
    },
    new Date(now.getTime() - 3600_000),
  );
  return challenge;
}

/** The challenge an answer signed (its clientDataJSON), or a refusal when it cannot be read. */
function answeredChallenge(clientDataJSON: string): string {
  try {
    const clientData = JSON.parse(Buffer.from(clientDataJSON, "base64url").toString("utf8")) as { challenge?: unknown };
    if (typeof clientData.challenge === "string" && /^[A-Za-z0-9_-]{16,128}$/.test(clientData.challenge)) return clientData.challenge;
  } catch {
    // refused below
  }
  throw new PasskeyError("malformed", "the passkey's answer could not be read");
}

/**
 * Uses up the challenge an answer signed, if it is one Keyfob issued for this purpose and this
 * login or account, unused and unexpired: one conditional update, so of two answers to one
 * challenge (a replay, or the same answer twice at once) only the first goes on.
 */
async function consumeChallenge(
  { store, clock }: Pick<Keyfob, "clock" | "store">,
  challenge: string,
  purpose: PasskeyPurpose,
  binding: { interactionId?: string; accountId?: string },
  now = clock.now(),
) {
  const row = await store.passkeyChallenges.consume(digest(challenge), purpose, binding, now);
  if (!row) throw new PasskeyError("expired", "this passkey request has expired or was already used; try again");
  return row;
}

/** A hosted login that can still be completed (the caller has checked it is this browser's). */
async function pendingLogin({ store, clock }: Pick<Keyfob, "clock" | "store">, interactionId: string, now = clock.now()) {
  if (!isOpaque(interactionId)) throw loginOver();
  const interaction = await store.interactions.find(interactionId);
  if (!interaction || interaction.completedAt || interaction.expiresAt <= now) throw loginOver();
  return interaction;
}

const loginOver = () =>
  new PasskeyError("unavailable_login", "this login has expired or was already completed; start again from the application");

const passkeyIdentity = (userHandle: string, passkeyId: string): LoginIdentity => ({
  provider: "passkey",
  subject: userHandle,
  emailVerified: false,
  passkeyId,
});

/** Options for "Continue with a passkey" on a login page: any passkey of Keyfob's (discoverable credentials). */
export async function loginOptions(
  keyfob: Pick<Keyfob, "config" | "clock" | "store">,
  interactionId: string,
): Promise<PasskeyRequestOptions> {
  await pendingLogin(keyfob, interactionId);
  const { rpID } = relyingParty(keyfob);
  const challenge = await issueChallenge(keyfob, "login", { interactionId });
  return generateAuthenticationOptions({
    rpID,
    challenge: isoBase64URL.toBuffer(challenge),
    userVerification: "required",
    timeout: CEREMONY_TIMEOUT_MS,
  });
}

/**
 * Options for "Create a passkey" on a login page: a new user handle, for a new account. The name
 * is what the person's passkey manager lists (there is no email or user name to show).
 */
export async function registrationOptions(
  keyfob: Pick<Keyfob, "config" | "clock" | "store">,
  interactionId: string,
  names: { userName: string; displayName: string },
): Promise<PasskeyCreationOptions> {
  await pendingLogin(keyfob, interactionId);
  const userHandle = randomBytes(32).toString("base64url");
  const challenge = await issueChallenge(keyfob, "register", { interactionId, userHandle });
  return creationOptions(keyfob, challenge, userHandle, names, []);
}

/**
 * Options for adding a passkey to a signed-in account, for a strong, recent login only
 * (requireStrongLogin): its user handle (new if it has no passkey yet); its passkeys excluded.
 */
export async function addPasskeyOptions(
  keyfob: Pick<Keyfob, "config" | "clock" | "store" | "audit">,
  accountId: string,
  names: { userName: string; displayName: string },
  requester: SignedInRequester,
): Promise<PasskeyCreationOptions> {
  requireStrongLogin(keyfob, accountId, "account.passkey_added", requester);
  const { store } = keyfob;
  const userHandle = (await store.accounts.identitySubject(accountId, "passkey")) ?? randomBytes(32).toString("base64url");
  const credentials = await store.accounts.passkeyIds(accountId);
  const challenge = await issueChallenge(keyfob, "add", { accountId, userHandle });
  return creationOptions(keyfob, challenge, userHandle, names, credentials);
}

function creationOptions(
  keyfob: Pick<Keyfob, "config">,
  challenge: string,
  userHandle: string,
  names: { userName: string; displayName: string },
  exclude: { id: string; transports: string[] }[],
): Promise<PasskeyCreationOptions> {
  const { rpID, rpName } = relyingParty(keyfob);
  return generateRegistrationOptions({
    rpName,
    rpID,
    userID: userID(userHandle),
    userName: names.userName.slice(0, 64),
    userDisplayName: names.displayName.slice(0, 64),
    challenge: isoBase64URL.toBuffer(challenge),
    timeout: CEREMONY_TIMEOUT_MS,
    attestationType: "none",
    excludeCredentials: exclude.map((credential) => ({
      id: credential.id,
      transports: credential.transports as AuthenticatorTransportFuture[],
    })),
    authenticatorSelection: { residentKey: "required", requireResidentKey: true, userVerification: "required" },
    supportedAlgorithmIDs: ALGORITHMS,
  });
}

/** Checks a new passkey (attestation "none") against a consumed registration challenge. */
async function verifyNewPasskey(keyfob: Pick<Keyfob, "config">, response: RegistrationResponseJSON, challenge: string) {
  const { rpID, origin } = relyingParty(keyfob);
  let verified: VerifiedRegistrationResponse;
  try {
    verified = await verifyRegistrationResponse({
      response,
      expectedChallenge: challenge,
      expectedOrigin: origin,
      expectedRPID: rpID,
      requireUserVerification: true,
      supportedAlgorithmIDs: ALGORITHMS,
    });
  } catch {
    throw new PasskeyError("not_verified", "the new passkey could not be verified");
  }
  const info = verified.registrationInfo;
  if (!verified.verified || !info) throw new PasskeyError("not_verified", "the new passkey could not be verified");
  return info;
}

/** Stores a verified passkey for an account. */
async function storePasskey(
  { store }: Pick<Keyfob, "store">,
  accountId: string,
  userHandle: string,
  info: NonNullable<VerifiedRegistrationResponse["registrationInfo"]>,
): Promise<string> {
  const { id, publicKey, counter, transports } = info.credential;
  try {
    await store.accounts.addPasskey({
      id,
      accountId,
      userHandle,
      publicKey: Buffer.from(publicKey),
      counter: BigInt(counter),
      // The browser's list, passed through unchecked by SimpleWebAuthn.
      transports: (transports ?? []).filter((t) => /^[a-z-]{1,16}$/.test(t)),
      deviceType: info.credentialDeviceType,
      backedUp: info.credentialBackedUp,
    });
  } catch (error) {
    if (error instanceof Duplicate) {
      throw new PasskeyError("already_registered", "this passkey is already registered");
    }
    throw error;
  }
  return id;
}

function parse<T>(schema: z.ZodType<T>, value: unknown): T {
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw new PasskeyError("malformed", "the passkey's answer could not be read");
  return parsed.data;
}

/**
 * A new passkey created on a login page: checked against that login's registration challenge, it
 * becomes a new account (random address) with a `passkey` identity. Returns that identity, for
 * completeAuthorization.
 */
export async function registerPasskey(
  keyfob: Pick<Keyfob, "config" | "clock" | "store">,
  interactionId: string,
  answer: unknown,
): Promise<LoginIdentity> {
  const response = parse(registrationResponse, answer) as RegistrationResponseJSON;
  const challenge = answeredChallenge(response.response.clientDataJSON);
  await pendingLogin(keyfob, interactionId);
  const row = await consumeChallenge(keyfob, challenge, "register", { interactionId });
  const info = await verifyNewPasskey(keyfob, response, challenge);
  if (await keyfob.store.accounts.findPasskey(info.credential.id)) {
    throw new PasskeyError("already_registered", "this passkey is already registered");
  }
  const identity = passkeyIdentity(row.userHandle!, info.credential.id);
  const accountId = await resolveAccount(keyfob, identity);
  await storePasskey(keyfob, accountId, row.userHandle!, info);
  return identity;
}

/**
 * A passkey added at /account by the signed-in account: the login asking checked again (it may
 * have aged since the options), the answer against that account's challenge; then stored.
 */
export async function addPasskey(
  keyfob: Pick<Keyfob, "config" | "clock" | "store" | "audit">,
  accountId: string,
  answer: unknown,
  requester: SignedInRequester,
): Promise<{ id: string }> {
  requireStrongLogin(keyfob, accountId, "account.passkey_added", requester);
  const { store } = keyfob;
  const response = parse(registrationResponse, answer) as RegistrationResponseJSON;
  const challenge = answeredChallenge(response.response.clientDataJSON);
  const row = await consumeChallenge(keyfob, challenge, "add", { accountId });
  const info = await verifyNewPasskey(keyfob, response, challenge);
  const userHandle = row.userHandle!;
  const identity = await store.accounts.findIdentity({ provider: "passkey", subject: userHandle });
  if (identity && identity.accountId !== accountId) throw new PasskeyError("not_verified", "this passkey belongs to another account");
  if (!identity) {
    try {
      await store.accounts.addIdentity({ provider: "passkey", subject: userHandle, accountId });
    } catch (error) {
      // The account's first two passkeys at once: the other request created the identity.
      if (!(error instanceof Duplicate)) throw error;
    }
  }
  return { id: await storePasskey(keyfob, accountId, userHandle, info) };
}

/**
 * A passkey's answer on a login page: the challenge must be this login's, the passkey one Keyfob
 * stored, the signature valid for its public key, from ISSUER_URL's origin and RP ID, with the user
 * verified. Its signature counter must grow (when the authenticator keeps one). Returns the
 * passkey identity of its account, for completeAuthorization.
 */
export async function verifyPasskeyLogin(
  keyfob: Pick<Keyfob, "config" | "clock" | "store">,
  interactionId: string,
  answer: unknown,
): Promise<LoginIdentity> {
  const { store } = keyfob;
  const response = parse(authenticationResponse, answer) as AuthenticationResponseJSON;
  const challenge = answeredChallenge(response.response.clientDataJSON);
  await pendingLogin(keyfob, interactionId);
  await consumeChallenge(keyfob, challenge, "login", { interactionId });
  const credential = await store.accounts.findPasskey(response.id);
  if (!credential) throw new PasskeyError("unknown_passkey", "this passkey is not registered with Keyfob");
  // The browser hands back the user.id the passkey was created with, base64url-encoded.
  if (response.response.userHandle && response.response.userHandle !== isoBase64URL.fromBuffer(userID(credential.userHandle))) {
    throw new PasskeyError("not_verified", "the passkey's user handle does not match");
  }
  const { rpID, origin } = relyingParty(keyfob);
  let verified: VerifiedAuthenticationResponse;
  try {
    verified = await verifyAuthenticationResponse({
      response,
      expectedChallenge: challenge,
      expectedOrigin: origin,
      expectedRPID: rpID,
      requireUserVerification: true,
      credential: {
        id: credential.id,
        publicKey: new Uint8Array(credential.publicKey),
        counter: Number(credential.counter),
        transports: credential.transports as AuthenticatorTransportFuture[],
      },
    });
  } catch {
    throw new PasskeyError("not_verified", "the passkey's signature could not be verified");
  }
  if (!verified.verified) throw new PasskeyError("not_verified", "the passkey's signature could not be verified");
  const { newCounter, credentialBackedUp, credentialDeviceType } = verified.authenticationInfo;
  // Only forward: a counter that did not grow was refused above (a cloned authenticator).
  await store.accounts.usedPasskey(
    credential.id,
    { counter: BigInt(newCounter), backedUp: credentialBackedUp, deviceType: credentialDeviceType },
    keyfob.clock.now(),
  );
  return passkeyIdentity(credential.userHandle, credential.id);
}

/** An account's passkeys, newest first, for /account. */
export function listPasskeys({ store }: Pick<Keyfob, "store">, accountId: string) {
  return store.accounts.passkeys(accountId);
}
