/**
 * A software WebAuthn authenticator for integration tests: it answers SimpleWebAuthn's JSON options
 * as a browser with a platform passkey would (ES256 keys from node:crypto, attestation "none",
 * discoverable credentials, a signature counter), so lib/passkeys is tested on real signatures.
 * Every answer can be bent (origin, flags, counter, signature) to play a wrong authenticator.
 */
import { createHash, generateKeyPairSync, randomBytes, sign, type KeyObject } from "node:crypto";
import { isoCBOR } from "@simplewebauthn/server/helpers";
import type { PasskeyCreationOptions, PasskeyRequestOptions } from "@/lib/passkeys/passkeys";

type Credential = { id: Buffer; key: KeyObject; userHandle: string; rpId: string; counter: number };

const UP = 0x01;
const UV = 0x04;
const AT = 0x40;

const b64url = (bytes: Uint8Array | Buffer | string) => Buffer.from(bytes).toString("base64url");
const sha256 = (data: Uint8Array | string) => createHash("sha256").update(data).digest();

export type Bend = { origin?: string; flags?: number; counter?: number; type?: string };

export class SoftAuthenticator {
  readonly credentials: Credential[] = [];
  constructor(readonly origin: string) {}

  /** navigator.credentials.create: a new ES256 passkey for the options' RP and user. */
  create(options: PasskeyCreationOptions, bend: Bend = {}) {
    const { privateKey, publicKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
    const jwk = publicKey.export({ format: "jwk" });
    const cose = new Map<number, number | Uint8Array>([
      [1, 2], // kty: EC2
      [3, -7], // alg: ES256
      [-1, 1], // crv: P-256
      [-2, Buffer.from(jwk.x!, "base64url")],
      [-3, Buffer.from(jwk.y!, "base64url")],
    ]);
    const id = randomBytes(16);
    // user.id comes base64url-encoded: SimpleWebAuthn's browser side gives the authenticator its
    // bytes and hands the handle back encoded the same way, so the text stands for the bytes.
    const userHandle = options.user.id;
    const credential: Credential = { id, key: privateKey, userHandle, rpId: options.rp.id!, counter: 0 };
    this.credentials.push(credential);
    const length = Buffer.alloc(2);
    length.writeUInt16BE(id.length);
    const authData = Buffer.concat([
      this.header(credential, bend.flags ?? UP | UV | AT, bend.counter ?? 0),
      Buffer.alloc(16),
      length,
      id,
      isoCBOR.encode(cose),
    ]);
    const attestationObject = isoCBOR.encode(
      new Map<string, unknown>([
        ["fmt", "none"],
        ["attStmt", new Map()],
        ["authData", authData],
      ]) as never,
    );
    const clientDataJSON = JSON.stringify({
      type: bend.type ?? "webauthn.create",
      challenge: options.challenge,
      origin: bend.origin ?? this.origin,
      crossOrigin: false,
    });
    return {
      id: b64url(id),
      rawId: b64url(id),
      type: "public-key" as const,
      response: { clientDataJSON: b64url(clientDataJSON), attestationObject: b64url(attestationObject), transports: ["internal"] },
      clientExtensionResults: {},
      authenticatorAttachment: "platform" as const,
    };
  }

  /** navigator.credentials.get: an assertion by one of its passkeys (the newest by default). */
  get(options: PasskeyRequestOptions, bend: Bend & { credential?: Credential; key?: KeyObject } = {}) {
    const credential = bend.credential ?? this.credentials.at(-1)!;
    credential.counter = bend.counter ?? credential.counter + 1;
    const authData = this.header(credential, bend.flags ?? UP | UV, credential.counter);
    const clientDataJSON = JSON.stringify({
      type: bend.type ?? "webauthn.get",
      challenge: options.challenge,
      origin: bend.origin ?? this.origin,
      crossOrigin: false,
    });
    const signature = sign("sha256", Buffer.concat([authData, sha256(clientDataJSON)]), bend.key ?? credential.key);
    return {
      id: b64url(credential.id),
      rawId: b64url(credential.id),
      type: "public-key" as const,
      response: {
        clientDataJSON: b64url(clientDataJSON),
        authenticatorData: b64url(authData),
        signature: b64url(signature),
        userHandle: credential.userHandle,
      },
      clientExtensionResults: {},
      authenticatorAttachment: "platform" as const,
    };
  }

  private header(credential: Credential, flags: number, counter: number) {
    const count = Buffer.alloc(4);
    count.writeUInt32BE(counter);
    return Buffer.concat([sha256(credential.rpId), Buffer.from([flags]), count]);
  }
}
