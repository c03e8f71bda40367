/** One key per purpose from KEYFOB_SECRET: a MAC or a session made with another purpose's key is worthless. */
import { createHmac, hkdfSync } from "node:crypto";
import { SignJWT } from "jose";
import { expect, it } from "vitest";
import { ADMIN_SESSION_COOKIE, readAdminSession } from "@/lib/admin/session";
import { deriveKey, type KeyPurpose } from "@/lib/keys/derive";
import { keyfob } from "@/lib/runtime";
import { accountLinkNonce, checkAccountLinkNonce } from "@/lib/siwe/login";

const purposes: KeyPurpose[] = ["signing-key-encryption", "admin-session", "wallet-link", "upstream-session"];

it("derives a distinct, stable key per purpose", () => {
  const secret = "s".repeat(32);
  const keys = purposes.map((p) => Buffer.from(deriveKey(secret, p)).toString("hex"));
  expect(new Set(keys).size).toBe(purposes.length);
  expect(Buffer.from(deriveKey(secret, "admin-session")).toString("hex")).toBe(keys[1]);
  // The encryption key is the one signing keys were always stored with.
  expect(Buffer.from(deriveKey(secret, "signing-key-encryption"))).toEqual(Buffer.from(hkdfSync("sha256", secret, "keyfob", "signing-key-encryption", 32)));
});

it("refuses an admin session signed with the encryption key, and a link nonce MAC'd with it", async () => {
  const k = keyfob();
  const account = "0x98D78d711C0ec544F6fb5d54fcf6559CF41546a9";
  const sign = (key: Uint8Array) => new SignJWT({}).setProtectedHeader({ alg: "HS256" }).setSubject(account).setAudience(ADMIN_SESSION_COOKIE).setIssuedAt().setExpirationTime("1h").sign(key);
  expect(await readAdminSession(k, await sign(k.macKeys.adminSession))).toBe(account);
  expect(await readAdminSession(k, await sign(k.encryptionKey))).toBeUndefined();
  expect(await readAdminSession(k, await sign(new Uint8Array(hkdfSync("sha256", k.encryptionKey, "keyfob", "admin-session", 32))))).toBeUndefined();

  const genuine = accountLinkNonce(k, account);
  expect(checkAccountLinkNonce(k, account, genuine)).toBe(true);
  const expires = genuine.slice(0, 8);
  const withEncryptionKey = `${expires}${createHmac("sha256", k.encryptionKey).update(`link-wallet:${account}:${expires}`).digest("hex").slice(0, 32)}`;
  expect(checkAccountLinkNonce(k, account, withEncryptionKey)).toBe(false);
});
