import { createHash, randomBytes } from "node:crypto";

/** A random, URL-safe, single-use value (state, authorization code): 256 bits. */
export function randomOpaque(): string {
  return randomBytes(32).toString("base64url");
}

/** Opaque values are stored by their SHA-256 only, so a database leak does not hand them out. */
export function opaqueDigest(value: string): string {
  return createHash("sha256").update(value).digest("base64url");
}

/** Whether a value has the shape of one of ours (43 base64url characters), checked before any lookup. */
export function isOpaque(value: unknown): value is string {
  return typeof value === "string" && /^[A-Za-z0-9_-]{43}$/.test(value);
}
