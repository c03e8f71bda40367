import { hkdfSync } from "node:crypto";

/**
 * What each key derived from KEYFOB_SECRET is for. One key per purpose (HKDF, RFC 5869, with the
 * purpose as its info), so that no key is used both to encrypt and to authenticate, and a MAC
 * made for one purpose is worthless for another.
 */
export type KeyPurpose =
  /** Encrypts signing keys at rest (A256GCM). */
  | "signing-key-encryption"
  /** Signs the dashboard's test sign-in results, carried in a cookie (HS256). */
  | "admin-try-result"
  /** MACs the account-bound nonces of /account's wallet linking. */
  | "wallet-link"
  /** Auth.js's session cookie for the upstream providers. */
  | "upstream-session"
  /** MACs the DPoP server nonces of each period (lib/oauth/dpop.ts). */
  | "dpop-nonce"
  /** Derives a refresh token's successor from it (lib/tokens/refresh.ts). */
  | "refresh-successor"
  /** Encrypts the secrets of client_secret_jwt clients at rest (A256GCM), which their assertions' HMAC needs. */
  | "client-secret-encryption";

export function deriveKey(secret: string, purpose: KeyPurpose): Uint8Array {
  return new Uint8Array(hkdfSync("sha256", secret, "keyfob", purpose, 32));
}
