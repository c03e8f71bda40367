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

/** A stored signing key that this KEYFOB_SECRET cannot open: it was encrypted under another (a restore without the secret kept with the backup). */
export class KeyDecryptionError extends Error {
  override name = "KeyDecryptionError";
}

export async function unseal(jwe: string, id: string, key: Uint8Array): Promise<string> {
  try {
    const { plaintext, protectedHeader } = await compactDecrypt(jwe, key);
    if (protectedHeader.kid !== id) throw new Error("id mismatch");
    return new TextDecoder().decode(plaintext);
  } catch {
    throw new KeyDecryptionError(
      `signing key ${id} cannot be decrypted with this KEYFOB_SECRET: it was encrypted under another one (restore the KEYFOB_SECRET kept with the backup)`,
    );
  }
}
