import { hkdfSync } from "node:crypto";
import { CompactEncrypt, compactDecrypt, type JWK } from "jose";

/** Derives the key that encrypts signing keys at rest from KEYFOB_SECRET. */
export function deriveEncryptionKey(secret: string): Uint8Array {
  return new Uint8Array(hkdfSync("sha256", secret, "keyfob", "signing-key-encryption", 32));
}

/** Encrypts a private JWK as a compact JWE (dir, A256GCM); the kid is bound in the protected header. */
export async function encryptPrivateJwk(jwk: JWK, kid: string, key: Uint8Array): Promise<string> {
  return new CompactEncrypt(new TextEncoder().encode(JSON.stringify(jwk)))
    .setProtectedHeader({ alg: "dir", enc: "A256GCM", kid })
    .encrypt(key);
}

export class KeyDecryptionError extends Error {
  override name = "KeyDecryptionError";
}

export async function decryptPrivateJwk(jwe: string, kid: string, key: Uint8Array): Promise<JWK> {
  try {
    const { plaintext, protectedHeader } = await compactDecrypt(jwe, key);
    if (protectedHeader.kid !== kid) throw new Error("kid mismatch");
    return JSON.parse(new TextDecoder().decode(plaintext)) as JWK;
  } catch {
    throw new KeyDecryptionError(
      `signing key ${kid} cannot be decrypted: KEYFOB_SECRET differs from the one it was stored with`,
    );
  }
}
