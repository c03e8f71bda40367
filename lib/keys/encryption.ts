import { CompactEncrypt, compactDecrypt } from "jose";
import { deriveKey } from "./derive";

/** Derives the key that encrypts signing keys at rest from KEYFOB_SECRET. */
export function deriveEncryptionKey(secret: string): Uint8Array {
  return deriveKey(secret, "signing-key-encryption");
}

/** Encrypts a secret as a compact JWE (dir, A256GCM); `id` (the kid) is bound in the protected header. */
export async function seal(plaintext: string, id: string, key: Uint8Array): Promise<string> {
  return new CompactEncrypt(new TextEncoder().encode(plaintext)).setProtectedHeader({ alg: "dir", enc: "A256GCM", kid: id }).encrypt(key);
}

export class KeyDecryptionError extends Error {
  override name = "KeyDecryptionError";
}

export async function unseal(jwe: string, id: string, key: Uint8Array): Promise<string> {
  try {
    const { plaintext, protectedHeader } = await compactDecrypt(jwe, key);
    if (protectedHeader.kid !== id) throw new Error("id mismatch");
    return new TextDecoder().decode(plaintext);
  } catch {
    throw new KeyDecryptionError(`secret ${id} cannot be decrypted: KEYFOB_SECRET differs from the one it was stored with`);
  }
}
