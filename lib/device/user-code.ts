import { randomInt } from "node:crypto";
import { opaqueDigest } from "../oauth/opaque";

/**
 * User codes (RFC 8628 6.1): 8 characters from 20 consonants, no vowels (no words) and none of the
 * characters read alike (0/O, 1/I), 20^8 ≈ 2.6·10^10 of them, shown as XXXX-XXXX. With guesses
 * rate-limited per address and overall, and codes living minutes, guessing a live one is hopeless.
 */
export const USER_CODE_ALPHABET = "BCDFGHJKLMNPQRSTVWXZ";
const LENGTH = 8;

/** A new user code, as shown: XXXX-XXXX. */
export function newUserCode(): string {
  const chars = Array.from({ length: LENGTH }, () => USER_CODE_ALPHABET[randomInt(USER_CODE_ALPHABET.length)]);
  return `${chars.slice(0, 4).join("")}-${chars.slice(4).join("")}`;
}

/**
 * A code as the user typed it, in its canonical form (upper case, no dash or spaces), or undefined
 * when it cannot be one of ours: RFC 8628 6.1 asks for case and punctuation to be forgiven.
 */
export function normalizeUserCode(typed: string): string | undefined {
  const code = typed.toUpperCase().replace(/[\s-]/g, "");
  if (code.length !== LENGTH) return undefined;
  return [...code].every((c) => USER_CODE_ALPHABET.includes(c)) ? code : undefined;
}

/** How a user code is stored and found: its SHA-256, of the canonical form. */
export const userCodeDigest = (canonical: string) => opaqueDigest(canonical);

/** The canonical form shown as XXXX-XXXX. */
export const formatUserCode = (canonical: string) => `${canonical.slice(0, 4)}-${canonical.slice(4)}`;
